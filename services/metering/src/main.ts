import { accountEventsV1, identityV1, meteringV1 } from "@pressroom/contracts";
import {
  Lifecycle,
  connectNats,
  createDb,
  createGrpcClient,
  createLogger,
  newId,
  pingDb,
  awaitTopology,
  consumers,
  publishEvent,
  startGrpcServer,
  startHealthServer,
  streams,
  subjects,
} from "@pressroom/platform";
import { sweep } from "./admission/admission.repository";
import { sweepIdempotencyKeys } from "./admission/idempotency.repository";
import { BillingService } from "./billing/billing.service";
import { identityDirectory } from "./billing/identity-client";
import { LocalProvider } from "./billing/local.provider";
import { StripeProvider, createStripeClient } from "./billing/stripe.provider";
import { loadMeteringConfig } from "./config";
import type { MeteringDb } from "./db";
import { renewQueuedLeases, settleFinishedJobs } from "./admission/finished-jobs";
import { JobEventsConsumer } from "./admission/job-events.consumer";
import { meteringService } from "./metering.grpc";

async function main(): Promise<void> {
  const config = loadMeteringConfig();
  const logger = createLogger("metering", config.LOG_LEVEL);
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  lifecycle.handleSignals();
  await startHealthServer(lifecycle, config.HEALTH_PORT);

  const db = createDb<MeteringDb>({ url: config.DATABASE_URL, schema: "metering", max: config.DB_POOL_MAX, logger });
  const nc = await connectNats({ url: config.NATS_URL, user: config.NATS_USER, pass: config.NATS_PASSWORD, name: "metering", logger });
  const jsm = await nc.jetstreamManager();
  await awaitTopology(jsm, { streams: [streams.JOBS, streams.ACCOUNTS], consumers: [{ stream: streams.JOBS, name: consumers.meteringJobs }] }, logger);
  const js = nc.jetstream();

  const identity = createGrpcClient(identityV1.IdentityServiceClient, config.IDENTITY_ADDR);
  const stripe = config.BILLING_PROVIDER === "stripe"
    ? new StripeProvider(createStripeClient(config.STRIPE_SECRET_KEY), { publicBaseUrl: config.PUBLIC_BASE_URL, webhookSecret: config.STRIPE_WEBHOOK_SECRET })
    : undefined;
  const billing = new BillingService({
    db,
    logger,
    provider: stripe ?? new LocalProvider(config.PUBLIC_BASE_URL),
    stripe,
    keys: identityDirectory(identity),
    sessionTtlSeconds: config.CHECKOUT_TTL_SECONDS,
  });
  if (stripe) logger.info({ provider: "stripe", stripeWebhooks: stripe.canVerifyWebhooks }, "billing configured");
  else {
    logger.warn(
      { provider: "local" },
      "BILLING_PROVIDER=local: FOR DEVELOPMENT ONLY. Checkouts upgrade keys WITHOUT ANY PAYMENT. Set BILLING_PROVIDER=stripe (with STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET) in production.",
    );
  }

  const grpc = await startGrpcServer({
    port: config.GRPC_PORT,
    services: [
      {
        definition: meteringV1.MeteringServiceService,
        implementation: meteringService({
          db,
          logger,
          leaseSeconds: config.SLOT_LEASE_SECONDS,
          billing,
          settleFinishedJobs: (keyId) => settleFinishedJobs({ db, jsm, logger }, keyId),
          onUsageCorrected: async ({ keyId, from, to, actor, periodStart }) => {
            const event = accountEventsV1.AccountEvent.fromPartial({
              id: newId("evt"),
              type: "account.usage_corrected",
              time: new Date().toISOString(),
              source: "metering",
              keyId,
              actor,
              usageCorrected: { periodStart: periodStart.toISOString(), fromUsed: String(from), toUsed: String(to) },
            });
            await publishEvent(js, {
              subject: subjects.account(keyId),
              spanSubject: "pressroom.account.{key_id}.v1",
              msgId: event.id,
              type: event.type,
              data: accountEventsV1.AccountEvent.encode(event).finish(),
            });
          },
        }),
      },
    ],
  });
  const jobEvents = new JobEventsConsumer({ js, db, logger, leaseSeconds: config.SLOT_LEASE_SECONDS });
  await jobEvents.start();

  const sweeper = setInterval(() => {
    renewQueuedLeases({ db, jsm, logger }, config.SLOT_LEASE_SECONDS)
      .then(async (renewed) => {
        const [removed, idempotencyKeys] = await Promise.all([sweep(db), sweepIdempotencyKeys(db)]);
        return { renewed, ...removed, idempotencyKeys };
      })
      .then(
        (removed) => logger.debug({ removed }, "metering sweep"),
        (err: unknown) => logger.warn({ err }, "metering sweep failed; the next one will retry"),
      );
  }, config.SWEEP_INTERVAL_MS);
  sweeper.unref();

  lifecycle.addReadinessCheck(() => pingDb(db));
  lifecycle.addReadinessCheck(() => !nc.isClosed());
  lifecycle.on("notReady", "grpc health", () => grpc.setServing(false));
  lifecycle.on("stopAccepting", "grpc", () => grpc.stop(5_000));
  lifecycle.on("stopAccepting", "sweeper", () => clearInterval(sweeper));
  lifecycle.on("drainNats", "job events", () => jobEvents.stop());
  lifecycle.on("drainNats", "nats", () => nc.drain());
  lifecycle.on("finishWork", "identity client", () => identity.close());
  lifecycle.on("closeDb", "postgres", () => db.destroy());
  lifecycle.setReady();
  logger.info({ grpcPort: grpc.port }, "metering ready");
}

main().catch((err: unknown) => {
  createLogger("metering").fatal({ err }, "metering failed to start");
  process.exit(1);
});

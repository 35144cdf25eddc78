/**
 * Metering: admission (rate, quota, concurrency slots), usage,
 * Idempotency-Key records and billing. One gRPC service (server.ts), and the
 * consumer of job events and the sweep (service.ts).
 */
import { identityV1 } from "@pressroom/contracts";
import {
  Lifecycle,
  awaitTopology,
  connectNats,
  consumers,
  createDb,
  createGrpcClient,
  createLogger,
  pingDb,
  grpcTlsOf,
  startGrpcServer,
  startHealthServer,
  streams,
} from "@pressroom/platform";
import { createBilling } from "./billing/create-billing";
import { identityDirectory } from "./billing/identity-client";
import { loadMeteringConfig } from "./config";
import type { MeteringDb } from "./db";
import { createServer } from "./server";
import { createService } from "./service";

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
  const tls = grpcTlsOf(config);
  const identity = createGrpcClient(identityV1.IdentityServiceClient, config.IDENTITY_ADDR, tls, "identity");
  const billing = createBilling({
    db,
    logger,
    keys: identityDirectory(identity),
    provider: config.BILLING_PROVIDER,
    stripeSecretKey: config.STRIPE_SECRET_KEY,
    stripeWebhookSecret: config.STRIPE_WEBHOOK_SECRET,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    sessionTtlSeconds: config.CHECKOUT_TTL_SECONDS,
  });

  const services = createServer({ db, js, jsm, logger, leaseSeconds: config.SLOT_LEASE_SECONDS, billing });
  const grpc = await startGrpcServer({ port: config.GRPC_PORT, host: config.GRPC_HOST, tls, services, logger });
  const { jobEvents, sweep } = createService({
    db,
    js,
    jsm,
    nc,
    logger,
    leaseSeconds: config.SLOT_LEASE_SECONDS,
    sweepIntervalMs: config.SWEEP_INTERVAL_MS,
    maxQueueWaitMs: config.RENDER_MAX_QUEUE_WAIT_MS,
    deadlineMs: config.RENDER_DEADLINE_MS,
  });
  await jobEvents.start();
  sweep.start();

  lifecycle.addReadinessCheck(() => pingDb(db));
  lifecycle.addReadinessCheck(() => !nc.isClosed());
  lifecycle.on("notReady", "grpc health", () => grpc.setServing(false));
  lifecycle.on("stopAccepting", "grpc", () => grpc.stop(5_000));
  lifecycle.on("stopConsuming", "job events", () => jobEvents.stop());
  lifecycle.on("finishWork", "job events in flight", () => jobEvents.finish());
  lifecycle.on("finishWork", "sweep", () => sweep.stop());
  // The connections close last, once the work that uses them has ended, as in every service.
  lifecycle.on("closeConnections", "nats", () => nc.drain());
  lifecycle.on("closeConnections", "identity client", () => identity.close());
  lifecycle.on("closeConnections", "postgres", () => db.destroy());
  lifecycle.setReady();
  logger.info({ grpcPort: grpc.port }, "metering ready");
}

main().catch((err: unknown) => {
  createLogger("metering").fatal({ err }, "metering failed to start");
  process.exit(1);
});

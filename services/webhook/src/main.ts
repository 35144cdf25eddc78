import { readFileSync } from "node:fs";
import { identityV1 } from "@pressroom/contracts";
import {
  AppError,
  Lifecycle,
  call,
  connectNats,
  createDb,
  createGrpcClient,
  createLogger,
  pingDb,
  awaitTopology,
  startHealthServer,
  consumers,
  streams,
} from "@pressroom/platform";
import { AuditProjectionConsumer } from "./audit/audit-projection.consumer";
import { loadWebhookConfig } from "./config";
import type { WebhookDb } from "./db";
import { DeliveryConsumer, type SecretSource } from "./delivery/delivery.consumer";
import { DispatchConsumer } from "./delivery/dispatch.consumer";
import { createPoster } from "./delivery/http";

async function main(): Promise<void> {
  const config = loadWebhookConfig();
  const logger = createLogger("webhook", config.LOG_LEVEL);
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  lifecycle.handleSignals();
  const health = await startHealthServer(lifecycle, config.HEALTH_PORT);

  if (config.WEBHOOK_ALLOW_LOOPBACK || config.WEBHOOK_EXTRA_CA_FILE || config.WEBHOOK_DEV_TARGET_PORT) {
    logger.warn(
      { allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK, extraCa: Boolean(config.WEBHOOK_EXTRA_CA_FILE), devTargetPort: config.WEBHOOK_DEV_TARGET_PORT ?? null },
      "development/test webhook settings are on: never use them in production",
    );
  }

  const db = createDb<WebhookDb>({ url: config.DATABASE_URL, schema: "webhook", max: config.WEBHOOK_CONCURRENCY + 4, logger });
  const nc = await connectNats({ url: config.NATS_URL, user: config.NATS_USER, pass: config.NATS_PASSWORD, name: "webhook", logger });
  const jsm = await nc.jetstreamManager();
  await awaitTopology(
    jsm,
    {
      streams: [streams.JOBS, streams.WEBHOOKS],
      consumers: [
        { stream: streams.JOBS, name: consumers.webhookDispatch },
        { stream: streams.JOBS, name: consumers.auditProjection },
        { stream: streams.WEBHOOKS, name: consumers.webhookDelivery },
      ],
    },
    logger,
  );
  const js = nc.jetstream();

  const identity = createGrpcClient(identityV1.IdentityServiceClient, config.IDENTITY_ADDR);
  const secrets: SecretSource = {
    async get(keyId) {
      try {
        const { secret, previousSecret } = await call(identity, identity.getWebhookSecret, { keyId });
        if (!secret) return undefined;
        return previousSecret ? [secret, previousSecret] : [secret];
      } catch (err) {
        if (err instanceof AppError && err.code === "NOT_FOUND") return undefined;
        throw err;
      }
    },
  };
  const poster = createPoster({
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK,
    ...(config.WEBHOOK_EXTRA_CA_FILE ? { ca: readFileSync(config.WEBHOOK_EXTRA_CA_FILE) } : {}),
    ...(config.WEBHOOK_DEV_TARGET_PORT ? { devTargetPort: config.WEBHOOK_DEV_TARGET_PORT } : {}),
  });

  const dispatch = new DispatchConsumer({ js, jsm, logger });
  const delivery = new DeliveryConsumer({
    js,
    jsm,
    db,
    logger,
    poster,
    secrets,
    concurrency: config.WEBHOOK_CONCURRENCY,
    perKeyConcurrency: config.WEBHOOK_PER_KEY_CONCURRENCY,
    policy: { baseMs: config.WEBHOOK_RETRY_BASE_MS, capMs: config.WEBHOOK_RETRY_CAP_MS, windowMs: config.WEBHOOK_RETRY_WINDOW_MS },
  });
  const audit = new AuditProjectionConsumer({ js, db, logger });
  await Promise.all([dispatch.start(), delivery.start(), audit.start()]);

  lifecycle.addReadinessCheck(() => pingDb(db));
  lifecycle.addReadinessCheck(() => !nc.isClosed());
  // No server accepts requests here: the consumers are the intake. Stop
  // pulling, let the attempts in flight finish and be recorded (they need
  // NATS and Postgres), then close NATS and Postgres.
  lifecycle.on("drainNats", "consumers", () => Promise.all([dispatch.stop(), delivery.stop(), audit.stop()]).then(() => undefined));
  lifecycle.on("finishWork", "callbacks in flight", () => Promise.all([dispatch.finish(), delivery.finish(), audit.finish()]).then(() => undefined));
  lifecycle.on("finishWork", "nats", () => nc.drain());
  lifecycle.on("finishWork", "clients", () => {
    identity.close();
    poster.close();
  });
  lifecycle.on("closeDb", "postgres", () => db.destroy());
  lifecycle.setReady();
  logger.info({ healthPort: health.port, concurrency: config.WEBHOOK_CONCURRENCY, perKeyConcurrency: config.WEBHOOK_PER_KEY_CONCURRENCY }, "webhook ready");
}

main().catch((err: unknown) => {
  createLogger("webhook").fatal({ err }, "webhook failed to start");
  process.exit(1);
});

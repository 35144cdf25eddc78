/**
 * The webhook service runs two things, both fed by the JOBS stream: callback
 * delivery (delivery/: signed POSTs with retries) and the job audit
 * projection (audit/: every job event as a row). service.ts builds both.
 */
import { readFileSync } from "node:fs";
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
  startHealthServer,
  streams,
} from "@pressroom/platform";
import { loadWebhookConfig } from "./config";
import type { WebhookDb } from "./db";
import { createPoster } from "./delivery/http";
import { identitySecrets } from "./delivery/identity-client";
import { createService } from "./service";

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
  const identity = createGrpcClient(identityV1.IdentityServiceClient, config.IDENTITY_ADDR, grpcTlsOf(config), "identity");
  const poster = createPoster({
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK,
    ...(config.WEBHOOK_EXTRA_CA_FILE ? { ca: readFileSync(config.WEBHOOK_EXTRA_CA_FILE) } : {}),
    ...(config.WEBHOOK_DEV_TARGET_PORT ? { devTargetPort: config.WEBHOOK_DEV_TARGET_PORT } : {}),
  });

  const { callbacks, auditProjection } = createService({
    js: nc.jetstream(),
    jsm,
    db,
    logger,
    poster,
    secrets: identitySecrets(identity),
    concurrency: config.WEBHOOK_CONCURRENCY,
    perKeyConcurrency: config.WEBHOOK_PER_KEY_CONCURRENCY,
    policy: { baseMs: config.WEBHOOK_RETRY_BASE_MS, capMs: config.WEBHOOK_RETRY_CAP_MS, windowMs: config.WEBHOOK_RETRY_WINDOW_MS },
  });
  const running = [callbacks.dispatch, callbacks.delivery, auditProjection];
  await Promise.all(running.map((consumer) => consumer.start()));

  lifecycle.addReadinessCheck(() => pingDb(db));
  lifecycle.addReadinessCheck(() => !nc.isClosed());
  // No server accepts requests here: the consumers are the intake. Stop
  // pulling, let the attempts in flight finish and be recorded (they need
  // NATS, identity and Postgres), then close the connections.
  lifecycle.on("stopConsuming", "consumers", () => Promise.all(running.map((consumer) => consumer.stop())).then(() => undefined));
  lifecycle.on("finishWork", "callbacks and audit rows in flight", () => Promise.all(running.map((consumer) => consumer.finish())).then(() => undefined));
  lifecycle.on("closeConnections", "nats", () => nc.drain());
  lifecycle.on("closeConnections", "clients", () => {
    identity.close();
    poster.close();
  });
  lifecycle.on("closeConnections", "postgres", () => db.destroy());
  lifecycle.setReady();
  logger.info({ healthPort: health.port, concurrency: config.WEBHOOK_CONCURRENCY, perKeyConcurrency: config.WEBHOOK_PER_KEY_CONCURRENCY }, "webhook ready");
}

main().catch((err: unknown) => {
  createLogger("webhook").fatal({ err }, "webhook failed to start");
  process.exit(1);
});

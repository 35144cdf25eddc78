import { baseConfigShape, connectNats, createDb, createLogger, loadConfig, natsUrlShape, z } from "@pressroom/platform";
import { rebuildAuditProjection } from "./audit/rebuild";
import type { WebhookDb } from "./db";

/**
 * Operator entrypoint: `node dist/audit-rebuild.js` drops the audit
 * projection (webhook.audit_job_events) and replays the JOBS stream from the
 * start. Safe while the service runs.
 */
async function main(): Promise<void> {
  const config = loadConfig(
    z.object({
      NATS_USER: baseConfigShape.NATS_USER,
      NATS_PASSWORD: baseConfigShape.NATS_PASSWORD,
      DATABASE_URL: z.string().min(1),
      ...natsUrlShape,
      LOG_LEVEL: z.string().default("info"),
    }),
  );
  const logger = createLogger("webhook-audit-rebuild", config.LOG_LEVEL);
  const db = createDb<WebhookDb>({ url: config.DATABASE_URL, schema: "webhook", max: 1, logger });
  const nc = await connectNats({ url: config.NATS_URL, user: config.NATS_USER, pass: config.NATS_PASSWORD, name: "webhook-audit-rebuild", logger });
  try {
    await rebuildAuditProjection({ db, js: nc.jetstream(), jsm: await nc.jetstreamManager(), logger });
  } catch (err) {
    logger.error({ err }, "audit projection rebuild failed");
    process.exitCode = 1;
  } finally {
    await nc.drain();
    await db.destroy();
  }
}

void main();

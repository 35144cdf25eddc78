import { baseConfigShape, env, jobBoundsShape, loadConfig, natsUrlShape, outputStoreShape, z } from "../config";
import { createLogger } from "../logger";
import { connectNats } from "./connection";
import { provisionTopology } from "./topology";

/**
 * The one-off NATS provisioning step: creates or updates every stream,
 * consumer and the output bucket, then exits (0 when all is in place). The
 * chart's provision Job runs it before the services roll out, and the local
 * stack before it starts them; services only check that what they bind to
 * exists. Safe to run again at any time.
 */
async function main(): Promise<void> {
  const config = loadConfig(
    z.object({
      LOG_LEVEL: baseConfigShape.LOG_LEVEL,
      ...natsUrlShape,
      NATS_USER: baseConfigShape.NATS_USER,
      NATS_PASSWORD: baseConfigShape.NATS_PASSWORD,
      /** Replicas of every stream: 1 for a single NATS server, 3 (or 5) for a cluster. */
      NATS_STREAM_REPLICAS: env.int(1, 1).refine((n) => n <= 5, "at most 5 (JetStream's limit)"),
      /** How long to wait for NATS to answer before giving up. */
      NATS_CONNECT_ATTEMPTS: env.int(60, 1),
      ...outputStoreShape,
      /** The RENDER stream's max age: the longest a render command waits in the queue, its retries included. */
      RENDER_MAX_QUEUE_WAIT_MS: jobBoundsShape.RENDER_MAX_QUEUE_WAIT_MS,
    }),
  );
  const logger = createLogger("nats-provision", config.LOG_LEVEL);
  const nc = await connectNats({
    url: config.NATS_URL,
    user: config.NATS_USER,
    pass: config.NATS_PASSWORD,
    name: "nats-provision",
    logger,
    maxReconnectAttempts: config.NATS_CONNECT_ATTEMPTS,
  });
  try {
    // A server outside a cluster refuses a new stream of more than one replica but
    // accepts (and records) an update to it: refuse both alike.
    if (config.NATS_STREAM_REPLICAS > 1 && !nc.info?.cluster) {
      throw new Error(`NATS_STREAM_REPLICAS is ${config.NATS_STREAM_REPLICAS}, but the NATS server at ${config.NATS_URL} is not part of a cluster: use 1`);
    }
    const report = await provisionTopology(nc.jetstream(), await nc.jetstreamManager(), {
      replicas: config.NATS_STREAM_REPLICAS,
      outputStore: { bucket: config.OUTPUT_BUCKET, ttlSeconds: config.OUTPUT_TTL_SECONDS },
      renderMaxQueueWaitMs: config.RENDER_MAX_QUEUE_WAIT_MS,
    });
    for (const { name, action } of report) logger.info({ replicas: config.NATS_STREAM_REPLICAS }, `${name} ${action}`);
    logger.info("JetStream topology in place");
  } finally {
    await nc.close();
  }
}

main().catch((err: unknown) => {
  createLogger("nats-provision").fatal({ err }, `NATS provisioning failed: ${(err as Error).message}`);
  process.exit(1);
});

import { Lifecycle, awaitTopology, connectNats, createDb, createLogger, pingDb, startHealthServer } from "@pressroom/platform";
import { loadStorageConfig } from "./config";
import type { StorageDb } from "./db";
import { ObjectWriter } from "./outputs/object-writer";
import { sweepExpired } from "./outputs/outputs.grpc";
import { RecentOutputs } from "./outputs/recent-outputs";
import { createStorageServer, openOutputStore } from "./server";

async function main(): Promise<void> {
  const config = loadStorageConfig();
  const logger = createLogger("storage", config.LOG_LEVEL);
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  lifecycle.handleSignals();
  await startHealthServer(lifecycle, config.HEALTH_PORT);

  const db = createDb<StorageDb>({ url: config.DATABASE_URL, schema: "storage", logger });
  const nc = await connectNats({ url: config.NATS_URL, user: config.NATS_USER, pass: config.NATS_PASSWORD, name: "storage", logger });
  const js = nc.jetstream();
  const jsm = await nc.jetstreamManager();
  await awaitTopology(jsm, { objectStores: [config.OUTPUT_BUCKET] }, logger);
  const store = await openOutputStore(js, config.OUTPUT_BUCKET);
  const target = { js, jsm, bucket: config.OUTPUT_BUCKET };
  const deps = {
    db,
    store,
    writeObject: (name: string) => new ObjectWriter(target, name),
    logger,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    signingSecret: config.OUTPUT_SIGNING_SECRET,
    ttlSeconds: config.OUTPUT_TTL_SECONDS,
    recentOutputs: new RecentOutputs({ maxBytes: config.OUTPUT_CACHE_MAX_BYTES, maxEntryBytes: config.OUTPUT_CACHE_MAX_ENTRY_BYTES }),
  };
  const grpc = await createStorageServer(deps, config.GRPC_PORT);
  const sweeper = setInterval(() => {
    sweepExpired(deps).then(
      (deleted) => {
        if (deleted > 0) logger.info({ deleted }, "expired outputs deleted");
      },
      (err: unknown) => logger.warn({ err }, "output sweep failed"),
    );
  }, config.SWEEP_INTERVAL_MS);

  lifecycle.addReadinessCheck(() => pingDb(db));
  lifecycle.addReadinessCheck(() => !nc.isClosed());
  lifecycle.on("notReady", "grpc health", () => grpc.setServing(false));
  lifecycle.on("stopAccepting", "grpc", () => grpc.stop(10_000));
  lifecycle.on("stopAccepting", "sweeper", () => clearInterval(sweeper));
  lifecycle.on("drainNats", "nats", () => nc.drain());
  lifecycle.on("closeDb", "postgres", () => db.destroy());
  lifecycle.setReady();
  logger.info({ grpcPort: grpc.port }, "storage ready");
}

main().catch((err: unknown) => {
  createLogger("storage").fatal({ err }, "storage failed to start");
  process.exit(1);
});

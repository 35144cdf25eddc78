/**
 * Storage: outputs in the JetStream object store (render writes their
 * bytes, storage names them), their rows in Postgres, signed download URLs,
 * and the expiry sweep. One gRPC service
 * (server.ts) and the sweep (service.ts).
 */
import { Lifecycle, awaitTopology, connectNats, createDb, createLogger, pingDb, grpcTlsOf, startGrpcServer, startHealthServer } from "@pressroom/platform";
import { RecentOutputs } from "@pressroom/domain";
import { loadStorageConfig } from "./config";
import type { StorageDb } from "./db";
import { openOutputStore } from "./outputs/output-store";
import { createServer } from "./server";
import { createService } from "./service";

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
  const deps = {
    db,
    store,
    bucket: { js, jsm, name: config.OUTPUT_BUCKET },
    logger,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    signingSecret: config.OUTPUT_SIGNING_SECRET,
    ttlSeconds: config.OUTPUT_TTL_SECONDS,
    recentOutputs: new RecentOutputs({ maxBytes: config.OUTPUT_CACHE_MAX_BYTES, maxEntryBytes: config.OUTPUT_CACHE_MAX_ENTRY_BYTES }),
  };

  const grpc = await startGrpcServer({ port: config.GRPC_PORT, host: config.GRPC_HOST, tls: grpcTlsOf(config), services: createServer(deps), logger });
  const { expirySweep } = createService({ ...deps, sweepIntervalMs: config.SWEEP_INTERVAL_MS });
  expirySweep.start();

  lifecycle.addReadinessCheck(() => pingDb(db));
  lifecycle.addReadinessCheck(() => !nc.isClosed());
  lifecycle.on("notReady", "grpc health", () => grpc.setServing(false));
  lifecycle.on("stopAccepting", "grpc", () => grpc.stop(10_000));
  lifecycle.on("finishWork", "expiry sweep", () => expirySweep.stop());
  // The connections close last, once the work that uses them has ended, as in every service.
  lifecycle.on("closeConnections", "nats", () => nc.drain());
  lifecycle.on("closeConnections", "postgres", () => db.destroy());
  lifecycle.setReady();
  logger.info({ grpcPort: grpc.port }, "storage ready");
}

main().catch((err: unknown) => {
  createLogger("storage").fatal({ err }, "storage failed to start");
  process.exit(1);
});

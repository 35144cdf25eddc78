import { renderV1, storageV1 } from "@pressroom/contracts";
import {
  Lifecycle,
  connectNats,
  createDb,
  connectEarly,
  createGrpcClient,
  createLogger,
  pingDb,
  provisionTopology,
  startGrpcServer,
  startHealthServer,
} from "@pressroom/platform";
import { loadBuiltinTemplates } from "./catalog/builtin-loader";
import { TemplateCatalog } from "./catalog/catalog";
import { catalogService } from "./catalog/catalog.grpc";
import { syncBuiltins } from "./catalog/catalog.repository";
import { loadRenderConfig } from "./config";
import type { RenderDb } from "./db";
import { RenderEngine } from "./engine";
import { createSubresourceFetcher } from "./worker/subresources";
import { RenderWorker } from "./worker/worker";

async function main(): Promise<void> {
  const config = loadRenderConfig();
  const logger = createLogger("render", config.LOG_LEVEL);
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  lifecycle.handleSignals();
  await startHealthServer(lifecycle, config.HEALTH_PORT);

  const db = createDb<RenderDb>({ url: config.DATABASE_URL, schema: "render", logger });
  const catalog = new TemplateCatalog(db);
  const storage = createGrpcClient(storageV1.StorageServiceClient, config.STORAGE_ADDR);
  // While Chromium launches and warms its pages, the rest is made ready: the
  // first job then finds its templates compiled and its connection to storage open.
  const prepare = async () => {
    const nc = await connectNats({ url: config.NATS_URL, name: "render", logger });
    const jsm = await nc.jetstreamManager();
    await provisionTopology(jsm);
    const added = await syncBuiltins(db, loadBuiltinTemplates());
    if (added.length) logger.info({ added }, "built-in templates added to the catalog");
    const [warmTemplates] = await Promise.all([catalog.warm(), connectEarly(storage, 1_000)]);
    return { nc, jsm, warmTemplates };
  };
  const [engine, { nc, jsm, warmTemplates }] = await Promise.all([
    RenderEngine.start({
      executablePath: config.CHROMIUM_PATH,
      slots: config.RENDER_SLOTS,
      deadlineMs: config.RENDER_DEADLINE_MS,
      maxPages: config.RENDER_MAX_PAGES,
      maxOutputBytes: config.RENDER_MAX_OUTPUT_BYTES,
      subrequestTimeoutMs: config.SUBREQUEST_TIMEOUT_MS,
      fetchSubresource: createSubresourceFetcher({ allowLoopback: config.RENDER_ALLOW_LOOPBACK, caFile: config.RENDER_EXTRA_CA_FILE }),
      logger,
    }),
    prepare(),
  ]);
  lifecycle.on("closeDb", "chromium", () => engine.close());
  const grpc = await startGrpcServer({
    port: config.GRPC_PORT,
    services: [{ definition: renderV1.TemplateCatalogServiceService, implementation: catalogService({ catalog, engine, logger }) }],
  });

  const worker = new RenderWorker({
    nc,
    js: nc.jetstream(),
    jsm,
    engine,
    catalog,
    storage,
    logger,
    workerName: config.WORKER_NAME,
    slots: config.RENDER_SLOTS,
  });
  await worker.start();

  lifecycle.addReadinessCheck(() => pingDb(db));
  lifecycle.addReadinessCheck(() => !nc.isClosed());
  lifecycle.on("notReady", "grpc health", () => grpc.setServing(false));
  lifecycle.on("stopAccepting", "grpc", () => grpc.stop(5_000));
  lifecycle.on("drainNats", "render queue", () => worker.stop());
  lifecycle.on("finishWork", "renders in flight", () => worker.finish());
  lifecycle.on("finishWork", "storage client", () => storage.close());
  lifecycle.on("closeDb", "nats", () => nc.drain());
  lifecycle.on("closeDb", "postgres", () => db.destroy());
  lifecycle.setReady();
  logger.info({ grpcPort: grpc.port, slots: config.RENDER_SLOTS, browserPid: engine.stats().browserPid, warmTemplates }, "render ready");
}

main().catch((err: unknown) => {
  createLogger("render").fatal({ err }, "render failed to start");
  process.exit(1);
});

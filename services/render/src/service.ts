import { renderV1, storageV1 } from "@pressroom/contracts";
import {
  Lifecycle,
  connectNats,
  createDb,
  connectEarly,
  createGrpcClient,
  pingDb,
  awaitTopology,
  consumers,
  streams,
  startGrpcServer,
  startHealthServer,
  type Logger,
} from "@pressroom/platform";
import { loadBuiltinTemplates } from "./catalog/builtin-loader";
import { TemplateCatalog } from "./catalog/catalog";
import { catalogService } from "./catalog/catalog.grpc";
import { TemplateExpander } from "./catalog/expander";
import { syncBuiltins } from "./catalog/catalog.repository";
import type { Config } from "./config";
import type { RenderDb } from "./db";
import type { RenderEngine } from "./engine";
import { observeRenderPool } from "./worker/metrics";
import { RenderWorker } from "./worker/worker";

/**
 * Everything of the render service but Chromium, which main.ts has already
 * begun to launch: the service is made ready while the engine warms its pages,
 * and takes jobs once both are done.
 */
export async function runRenderService(config: Readonly<Config>, logger: Logger, starting: Promise<RenderEngine>): Promise<void> {
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  lifecycle.handleSignals();
  await startHealthServer(lifecycle, config.HEALTH_PORT);

  const db = createDb<RenderDb>({ url: config.DATABASE_URL, schema: "render", logger });
  const catalog = new TemplateCatalog(db);
  const expander = new TemplateExpander({ threads: config.RENDER_SLOTS, maxOutputBytes: config.RENDER_MAX_HTML_BYTES });
  lifecycle.on("closeDb", "template threads", () => expander.close());
  const storage = createGrpcClient(storageV1.StorageServiceClient, config.STORAGE_ADDR);
  // The first job finds its templates compiled and its connection to storage open.
  const prepare = async () => {
    const nc = await connectNats({ url: config.NATS_URL, user: config.NATS_USER, pass: config.NATS_PASSWORD, name: "render", logger });
    const jsm = await nc.jetstreamManager();
    await awaitTopology(jsm, { streams: [streams.JOBS, streams.RENDER], consumers: [{ stream: streams.RENDER, name: consumers.renderWorkers }] }, logger);
    const added = await syncBuiltins(db, loadBuiltinTemplates());
    if (added.length) logger.info({ added }, "built-in templates added to the catalog");
    const [warmTemplates] = await Promise.all([catalog.warm(), connectEarly(storage, 1_000)]);
    return { nc, jsm, warmTemplates };
  };
  const [engine, { nc, jsm, warmTemplates }] = await Promise.all([starting, prepare()]);
  lifecycle.on("closeDb", "chromium", () => engine.close());
  const grpc = await startGrpcServer({
    port: config.GRPC_PORT,
    services: [{ definition: renderV1.TemplateCatalogServiceService, implementation: catalogService({ catalog, expander, engine, deadlineMs: config.RENDER_DEADLINE_MS, logger }) }],
  });

  const worker = new RenderWorker({
    nc,
    js: nc.jetstream(),
    jsm,
    engine,
    catalog,
    expander,
    deadlineMs: config.RENDER_DEADLINE_MS,
    storage,
    logger,
    workerName: config.WORKER_NAME,
    slots: config.RENDER_SLOTS,
  });
  await worker.start();
  observeRenderPool({ engine, slots: config.RENDER_SLOTS });

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

/**
 * The render service's entry point: it only wires. Most of a start is
 * Chromium's (its launch and the warm-up of every page), so the engine is
 * started first, with only what it needs loaded, and the rest of the service
 * is loaded and connected while Chromium boots.
 */
import { createLogger } from "@pressroom/platform/logger";
import { loadRenderConfig } from "./config";
import { RenderEngine } from "./engine";
import { createSubresourceFetcher } from "./worker/subresources";

async function main(): Promise<void> {
  const config = loadRenderConfig();
  const logger = createLogger("render", config.LOG_LEVEL);
  const starting = RenderEngine.start({
    executablePath: config.CHROMIUM_PATH,
    sandbox: config.RENDER_CHROMIUM_SANDBOX,
    connectUrl: config.RENDER_CHROMIUM_URL,
    slots: config.RENDER_SLOTS,
    deadlineMs: config.RENDER_DEADLINE_MS,
    maxPages: config.RENDER_MAX_PAGES,
    maxOutputBytes: config.RENDER_MAX_OUTPUT_BYTES,
    subrequestTimeoutMs: config.SUBREQUEST_TIMEOUT_MS,
    subresourceBudgetBytes: config.RENDER_SUBRESOURCE_BUDGET_BYTES,
    fetchSubresource: createSubresourceFetcher({
      ports: config.RENDER_SUBRESOURCE_PORTS,
      allowLoopback: config.RENDER_ALLOW_LOOPBACK,
      caFile: config.RENDER_EXTRA_CA_FILE,
    }),
    logger,
  });
  // Awaited below; until then a failure must not count as unhandled.
  starting.catch(() => undefined);
  // Chromium is spawned in the launch's first microtasks (see launchChromium):
  // one turn of the event loop, and it boots while the modules below load.
  await new Promise((resolve) => setImmediate(resolve));
  const { Lifecycle, pingDb, startGrpcServer, startHealthServer } = await import("@pressroom/platform");
  const { connectDependencies, createExpiry, createServer, createService } = await import("./service.js");
  const { observeRenderPool } = await import("./worker/metrics.js");

  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  lifecycle.handleSignals();
  await startHealthServer(lifecycle, config.HEALTH_PORT);
  const deps = await connectDependencies(config, logger, starting);
  const { db, nc, engine, expander, storage } = deps;

  const grpc = await startGrpcServer({ port: config.GRPC_PORT, host: config.GRPC_HOST, tls: deps.tls, services: createServer(deps), logger });
  const worker = createService(deps);
  await worker.start();
  const expiry = createExpiry(deps);
  expiry.start();
  observeRenderPool({ engine, slots: config.RENDER_SLOTS });

  lifecycle.addReadinessCheck(() => pingDb(db));
  lifecycle.addReadinessCheck(() => !nc.isClosed());
  // Not ready while the browser is relaunched, or while the Chromium container restarts and the engine reconnects.
  lifecycle.addReadinessCheck(() => engine.stats().browserLive);
  lifecycle.on("notReady", "grpc health", () => grpc.setServing(false));
  lifecycle.on("stopAccepting", "grpc", () => grpc.stop(5_000));
  lifecycle.on("stopConsuming", "render queue", () => worker.stop());
  lifecycle.on("stopConsuming", "job expiry requests", () => expiry.stop());
  lifecycle.on("finishWork", "renders in flight", () => worker.finish());
  lifecycle.on("finishWork", "chromium", () => engine.close());
  lifecycle.on("finishWork", "template threads", () => expander.close());
  lifecycle.on("closeConnections", "nats", () => nc.drain());
  lifecycle.on("closeConnections", "storage client", () => storage.close());
  lifecycle.on("closeConnections", "postgres", () => db.destroy());
  lifecycle.setReady();
  logger.info({ grpcPort: grpc.port, slots: config.RENDER_SLOTS, browserPid: engine.stats().browserPid }, "render ready");
}

main().catch((err: unknown) => {
  createLogger("render").fatal({ err }, "render failed to start");
  process.exit(1);
});

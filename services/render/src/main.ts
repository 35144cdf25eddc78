/** Most of render's start is Chromium's: the engine starts first, with only what it needs loaded; the rest loads and connects while Chromium boots. */
import { createLogger } from "@pressroom/platform/logger";
import { loadRenderConfig } from "./config";
import { launchEngine } from "./engine-launch";

async function main(): Promise<void> {
  const config = loadRenderConfig();
  const logger = createLogger("render", config.LOG_LEVEL);
  const starting = launchEngine(config, logger);
  // Awaited by connectRender; until then a failure must not count as unhandled.
  starting.catch(() => undefined);
  // Chromium is spawned in the launch's first microtasks (see launchChromium):
  // one turn of the event loop, and it boots while the modules below load.
  await new Promise((resolve) => setImmediate(resolve));
  const [{ runService }, { connectRender }, { createServer }, { createService }] = await Promise.all([
    import("@pressroom/platform"),
    import("./deps.js"),
    import("./server.js"),
    import("./service.js"),
  ]);
  runService({
    name: "render",
    config: () => config,
    logger,
    connect: (context) => connectRender(context, starting),
    build: (deps) => ({ grpc: createServer(deps), ...createService(deps) }),
  });
}

main().catch((err: unknown) => {
  createLogger("render").fatal({ err }, "render failed to start");
  process.exit(1);
});

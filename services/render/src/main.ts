/** Most of render's start is Chromium's: the engine starts first, with only what it needs loaded; the rest loads and connects while Chromium boots. */
import { createLogger } from "@pressroom/platform/logger";
import { loadRenderConfig } from "./config";
import { launchEngine } from "./engine-launch";

async function main(): Promise<void> {
  const config = loadRenderConfig();
  const logger = createLogger("render", config.LOG_LEVEL);
  const starting = launchEngine(config, logger);
  // Awaited by connectRender (a failure meanwhile is not unhandled). Chromium is spawned in the launch's first
  // microtasks (see launchChromium): one turn of the event loop, and it boots while the modules below load.
  starting.catch(() => undefined);
  await new Promise((resolve) => setImmediate(resolve));
  const { runService } = await import("@pressroom/platform");
  const { connectRender } = await import("./deps.js");
  const { createServer } = await import("./server.js");
  const { createService } = await import("./service.js");
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

/**
 * The render service's entry point. Most of a start is Chromium's: its launch
 * and the warm-up of every page. So the engine is started first, with only
 * what it needs loaded (config, logger, the engine itself), and the rest of
 * the service is loaded and prepared while Chromium boots.
 */
import { createLogger } from "@pressroom/platform/logger";
import { loadRenderConfig } from "./config";
import { RenderEngine } from "./engine";
import { createSubresourceFetcher } from "./worker/subresources";

async function main(): Promise<void> {
  const config = loadRenderConfig();
  const logger = createLogger("render", config.LOG_LEVEL);
  const engine = RenderEngine.start({
    executablePath: config.CHROMIUM_PATH,
    sandbox: config.RENDER_CHROMIUM_SANDBOX,
    slots: config.RENDER_SLOTS,
    deadlineMs: config.RENDER_DEADLINE_MS,
    maxPages: config.RENDER_MAX_PAGES,
    maxOutputBytes: config.RENDER_MAX_OUTPUT_BYTES,
    subrequestTimeoutMs: config.SUBREQUEST_TIMEOUT_MS,
    subresourceBudgetBytes: config.RENDER_SUBRESOURCE_BUDGET_BYTES,
    fetchSubresource: createSubresourceFetcher({ allowLoopback: config.RENDER_ALLOW_LOOPBACK, caFile: config.RENDER_EXTRA_CA_FILE }),
    logger,
  });
  // Awaited by the service below; until then a failure must not count as unhandled.
  engine.catch(() => undefined);
  // Chromium is spawned in the launch's first microtasks (see launchChromium):
  // one turn of the event loop, and it boots while the modules below load.
  await new Promise((resolve) => setImmediate(resolve));
  const { runRenderService } = await import("./service.js");
  await runRenderService(config, logger, engine);
}

main().catch((err: unknown) => {
  createLogger("render").fatal({ err }, "render failed to start");
  process.exit(1);
});

import type { Logger } from "@pressroom/platform/logger";
import type { Config } from "./config";
import { RenderEngine } from "./engine";
import { createSubresourceFetcher } from "./producer/subresources";

/**
 * Begins the engine's start (Chromium's launch and the warm-up of its pages) with the service's
 * settings. Only what the engine needs is loaded here, so that main.ts can begin it before the
 * rest of the service loads.
 */
export function launchEngine(config: Readonly<Config>, logger: Logger): Promise<RenderEngine> {
  return RenderEngine.start({
    executablePath: config.CHROMIUM_PATH,
    sandbox: config.RENDER_CHROMIUM_SANDBOX,
    processMemoryMiB: config.RENDER_CHROMIUM_PROCESS_MEMORY_MIB,
    connectUrl: config.RENDER_CHROMIUM_URL,
    slots: config.RENDER_SLOTS,
    keyWindows: config.RENDER_KEY_WINDOWS,
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
}

export { RenderEngine, type EngineStats } from "./engine";
export {
  RenderFailure,
  type EngineLogger,
  type EngineOptions,
  type FailureReason,
  type RenderCallOptions,
  type RenderJob,
  type RenderOutput,
  type SubresourceBudget,
  type SubresourceFetcher,
} from "./types";
export { countPdfPages } from "./pdf";
export { byteSize, outputCap } from "./job";
export { DEFAULT_CHROMIUM_PATH, PRLIMIT_PATH, chromiumArgs, sweepAbandonedDirs } from "./chromium";
/** The pieces the engine is built from, for a variant of it built elsewhere (the bench's fresh contexts). */
export { engineSettings } from "./options";
export { openChromium } from "./chromium";
export { Slot, type SlotDeps } from "./slot";
export { FifoSemaphore, WaiterQueue } from "./fifo";
export { layoutOf } from "./paper";
export { deadlineOf } from "./job";
export { assetContentType } from "./network";
export { CLEARED_STORAGE } from "./page";
export { pageCredentials, type PageCredentials } from "./credentials";
export { isScriptFree } from "./script-free";

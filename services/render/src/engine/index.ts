export { RenderEngine, type EngineStats } from "./engine";
export {
  RenderFailure,
  type EngineLogger,
  type EngineOptions,
  type FailureReason,
  type IsolationStrategy,
  type PageSettings,
  type RenderCallOptions,
  type RenderJob,
  type RenderOutput,
  type SubresourceBudget,
  type SubresourceFetcher,
} from "./types";
export { countPdfPages } from "./pdf";
export { DEFAULT_CHROMIUM_PATH, chromiumArgs } from "./chromium";

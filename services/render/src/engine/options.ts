import { DEFAULT_CHROMIUM_PATH, type LaunchSettings } from "./chromium";
import type { EngineLogger, EngineOptions, SubresourceFetcher } from "./types";

const DEFAULTS = {
  executablePath: DEFAULT_CHROMIUM_PATH,
  deadlineMs: 30_000,
  maxPages: 500,
  maxOutputBytes: 50 * 1024 * 1024,
  subrequestTimeoutMs: 5_000,
  subresourceBudgetBytes: 50 * 1024 * 1024,
  recycleAfterRenders: 2_000,
  sparePages: 1,
  keyWindows: 8,
  rendererHeapMiB: 512,
  processMemoryMiB: 2048,
};

/** What every page of the engine is given (its default limits among them). */
export interface SlotSettings {
  fetchSubresource?: SubresourceFetcher;
  subrequestTimeoutMs: number;
  subresourceBudgetBytes: number;
  maxPages: number;
  maxOutputBytes: number;
  /** Each Chromium process's data limit, named when a document runs out of it. */
  processMemoryMiB: number;
  logger?: EngineLogger;
}

/** EngineOptions with every default filled in, as the browser and its pages take them. */
export interface EngineSettings {
  deadlineMs: number;
  recycleAfterRenders: number;
  launch: LaunchSettings;
  /** Windows, all fresh, that a browser starts with: slots + spares. */
  pages: number;
  /** Fresh windows kept warm for keys without a free window of their own. */
  spares: number;
  /** The most windows a browser keeps: slots + spares + keyWindows. */
  maxWindows: number;
  slot: SlotSettings;
}

export function engineSettings(opts: EngineOptions): EngineSettings {
  const deadlineMs = opts.deadlineMs ?? DEFAULTS.deadlineMs;
  const spares = opts.sparePages ?? DEFAULTS.sparePages;
  return {
    deadlineMs,
    recycleAfterRenders: opts.recycleAfterRenders ?? DEFAULTS.recycleAfterRenders,
    launch: {
      executablePath: opts.executablePath ?? DEFAULTS.executablePath,
      sandbox: opts.sandbox ?? false,
      rendererHeapMiB: opts.rendererHeapMiB ?? DEFAULTS.rendererHeapMiB,
      processMemoryMiB: opts.processMemoryMiB ?? DEFAULTS.processMemoryMiB,
      protocolTimeoutMs: Math.max(deadlineMs, 30_000) + 10_000,
      connectUrl: opts.connectUrl,
    },
    pages: opts.slots + spares,
    spares,
    maxWindows: opts.slots + spares + (opts.keyWindows ?? DEFAULTS.keyWindows),
    slot: {
      fetchSubresource: opts.fetchSubresource,
      subrequestTimeoutMs: opts.subrequestTimeoutMs ?? DEFAULTS.subrequestTimeoutMs,
      subresourceBudgetBytes: opts.subresourceBudgetBytes ?? DEFAULTS.subresourceBudgetBytes,
      maxPages: opts.maxPages ?? DEFAULTS.maxPages,
      maxOutputBytes: opts.maxOutputBytes ?? DEFAULTS.maxOutputBytes,
      processMemoryMiB: opts.processMemoryMiB ?? DEFAULTS.processMemoryMiB,
      logger: opts.logger,
    },
  };
}

import type { RenderOptions } from "@pressroom/domain";
import type { PageCredentials } from "./credentials";

export interface RenderJob {
  html: string;
  /**
   * Whose job this is (the API key's id). A window (browser context, page and
   * renderer) only ever serves jobs of one key: after a job it is reset and may
   * take that key's next job, never another key's. Jobs without a key share
   * windows only with each other.
   */
  keyId?: string;
  /** "png" is any image (see options.imageFormat). */
  kind: "pdf" | "png";
  /**
   * How the document is printed or captured, in the one shape of a request's options
   * (@pressroom/domain), the request's already over its template's and its header and
   * footer filled in. A PDF: the paper (format, or width and height; absent: A4 with the
   * document's CSS @page size preferred), its margins (a side absent: 1 cm), landscape,
   * header and footer, scale, backgrounds, page ranges, CSS page size, media. An image:
   * imageWidth and imageHeight (required: the exact output size in CSS pixels, times
   * deviceScaleFactor in device pixels), imageFormat, quality, omitBackground. Both:
   * waitFor, after the document loaded, within the deadline (not met fails the job
   * `not_ready`). The rest (what the PDF says about itself, its protection, its name) is
   * not the engine's.
   */
  options?: RenderOptions;
  /** Lowers the engine's deadline for this job; never raises it. */
  deadlineMs?: number;
  /**
   * The whole deadline the job was given, when `deadlineMs` is what earlier steps
   * (template expansion) left of it: the `deadline` failure names this one, so the
   * customer reads the deadline they were promised, not the remainder.
   */
  jobDeadlineMs?: number;
  /**
   * An uncaught exception in the document's script (or an unhandled promise
   * rejection) before it is printed: "fail" (the default) fails the render
   * with `script_error`, naming the exception's first line; "ignore" renders anyway,
   * and the output lists them (RenderOutput.scriptErrors).
   */
  scriptErrors?: "fail" | "ignore";
  /**
   * Files the document refers to by the relative URL `assets/<name>` (an own
   * template's stored assets), served from here, never fetched.
   */
  assets?: ReadonlyMap<string, Uint8Array>;
  /**
   * A url source's credentials: added by the fetcher to the document's sub-requests on their
   * origin only (see credentials.ts). Never logged.
   */
  credentials?: PageCredentials;
}

/** How one render() call is run. */
export interface RenderCallOptions {
  /** Aborts the render: it rejects with `signal.reason`. */
  signal?: AbortSignal;
  /**
   * Keeps the job's page (unwiped, given to no one) until this settles. The
   * wipe for the next job costs Chromium CPU; on a small machine, holding it
   * back while the caller stores and announces the output takes that CPU off
   * the request's path. The next job takes another warm page meanwhile (see
   * `sparePages`).
   */
  holdPageUntil?: Promise<unknown>;
}

export interface RenderOutput {
  data: Uint8Array;
  contentType: "application/pdf" | "image/png" | "image/jpeg" | "image/webp";
  pages: number;
  /** Time on a slot: navigation, load, fonts and print/screenshot (not time queued). */
  renderMs: number;
  /** The first lines of the uncaught exceptions the document's script threw, when it rendered anyway (`scriptErrors: "ignore"`). */
  scriptErrors?: string[];
}

export type FailureReason =
  | "deadline"
  | "page_cap"
  | "output_cap"
  | "resource_budget"
  | "renderer_crashed"
  | "window_closed"
  | "page_lost"
  | "crashed"
  | "blocked_navigation"
  | "invalid_document"
  | "script_error"
  | "not_ready"
  | "source_unavailable"
  | "resource_error"
  | "memory_limit";

/**
 * Why a document could not be rendered. The message is safe to show the
 * customer and names the limit that was hit. `crashed` (the browser died, no
 * browser, shutting down) is never the document's fault. A page lost while
 * its document ran, with the browser alive and no other page lost with it,
 * is the document's: `renderer_crashed` (e.g. out of memory) or
 * `window_closed` (`window.close()`). `page_lost` (pages lost together, the
 * browser alive) cannot be told apart, so it is retryable, like `crashed`;
 * every other reason is the document's own and would fail again.
 */
export class RenderFailure extends Error {
  override readonly name = "RenderFailure";
  readonly retryable: boolean;

  constructor(
    readonly reason: FailureReason,
    message: string,
    /** `crashed` only: the browser died (or stopped answering) under the document, not a shutdown or a browser missing. */
    readonly browserDied = false,
  ) {
    super(message);
    this.retryable = reason === "crashed" || reason === "page_lost";
  }
}

/**
 * Fetches one sub-resource of a document on the engine's behalf. Chromium never
 * touches the network itself: every http(s) request a document makes (images,
 * fonts, stylesheets, scripts, iframes, XHR/fetch, each redirect hop) comes here.
 * The fetcher decides what may be reached (resolve, then refuse private, loopback,
 * link-local and IPv4-mapped addresses) and must NOT follow redirects: return the
 * 3xx with its Location header and Chromium asks again for the next hop. The
 * request headers offer only gzip, deflate and br; a body returned still encoded
 * (with its Content-Encoding header, stacked codings too) is decoded by the engine
 * as a stream, each decoded chunk counted against the budget (and never past 64 MiB).
 * Every byte kept should be counted with `budget.take` as it arrives: the budget
 * is the job's, shared with its other sub-requests in flight, and `take` throws
 * (failing the job `resource_budget`) once it is spent, so a download stops at
 * the budget instead of after it. Bytes not counted are charged when the body is
 * returned. Throw to fail the request.
 */
export type SubresourceFetcher = (req: {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  signal: AbortSignal;
  budget: SubresourceBudget;
}) => Promise<{ status: number; headers: Record<string, string>; body: Buffer }>;

/** What one job's sub-resources may still add up to. */
export interface SubresourceBudget {
  /** Counts `bytes` more against the job; throws SubresourceTooLarge when that spends the budget. */
  take(bytes: number): void;
}

/** pino-compatible subset. */
export interface EngineLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface EngineOptions {
  /** Default DEFAULT_CHROMIUM_PATH (Debian's chromium-headless-shell). */
  executablePath?: string;
  /** Renders at once; each has its own browser context. Others wait in FIFO order. */
  slots: number;
  /** Hard limit per render, from the moment it gets a slot. Default 30 000. */
  deadlineMs?: number;
  /** Default 500. */
  maxPages?: number;
  /** Default 50 MiB. */
  maxOutputBytes?: number;
  /** Bytes all of one job's sub-resources may add up to (decoded); past it the job fails `resource_budget`. Default 50 MiB. */
  subresourceBudgetBytes?: number;
  /** Per sub-request limit handed to the fetcher as an AbortSignal. Default 5 000. */
  subrequestTimeoutMs?: number;
  /** Default: refuse all network access (only data: and blob: URLs load). */
  fetchSubresource?: SubresourceFetcher;
  /** Relaunch the browser after this many renders (in-flight jobs finish first). Default 2 000. */
  recycleAfterRenders?: number;
  logger?: EngineLogger;
  /** Fresh windows (no job has run in them) kept warm beyond `slots`, for a key that has no window of its own free. Default 1. */
  sparePages?: number;
  /**
   * Windows kept beyond `slots` and `sparePages` for keys whose jobs ran in them: a key's
   * next job reuses one (reset) instead of a fresh window. The least recently used goes
   * first when a fresh one is needed. Default 8.
   */
  keyWindows?: number;
  /** Run Chromium with its sandbox (needs a non-root user and kernel support). Default false. */
  sandbox?: boolean;
  /** Renderer V8 old-space limit in MiB. Default 512. */
  rendererHeapMiB?: number;
  /**
   * The data each Chromium process may take (its RLIMIT_DATA, set with util-linux's prlimit and
   * inherited by every renderer), in MiB: V8's heap, ArrayBuffers and WebAssembly memory, which
   * the heap limit does not count. Default 2048.
   */
  processMemoryMiB?: number;
  /**
   * The DevTools endpoint (e.g. http://127.0.0.1:9222) of a Chromium started elsewhere, run
   * by chromium-main.ts: the engine connects to it instead of launching one, waits for it at
   * start, and reconnects when it restarts. `executablePath`, `sandbox`, `rendererHeapMiB` and
   * `processMemoryMiB` are then that process's (the engine names the last in its failures).
   */
  connectUrl?: string;
}

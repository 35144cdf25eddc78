/** Print settings of a PDF template (margins are CSS lengths: px, in, cm, mm, pt, pc). */
export interface PageSettings {
  /** A paper name (A4, Letter…), or "" with width and height. */
  format: string;
  /** The paper's size as CSS lengths, when format is "". */
  width?: string;
  height?: string;
  landscape: boolean;
  marginTop: string;
  marginRight: string;
  marginBottom: string;
  marginLeft: string;
  /** Chromium header template (pageNumber, totalPages, date, title, url classes); "" for none. */
  headerTemplate: string;
  footerTemplate: string;
}

/** How a PDF is printed beyond its paper (absent: Chromium's defaults, backgrounds printed). */
export interface PrintSettings {
  /** 0.1 to 2. */
  scale?: number;
  printBackground?: boolean;
  /** e.g. "1-3,5"; pages past the last are left out. */
  pageRanges?: string;
  /** The document's CSS @page size wins over the paper. */
  preferCssPageSize?: boolean;
  /** The CSS media type the document is laid out for (default print). */
  media?: "print" | "screen";
}

/** When the page is ready to print or capture, after it loaded: exactly one condition. */
export type WaitCondition = { selector: string } | { expression: string } | { networkIdle: true } | { delayMs: number };

export type ImageFormat = "png" | "jpeg" | "webp";

export interface RenderJob {
  html: string;
  /**
   * Whose job this is (the API key's id). A window (browser context, page and
   * renderer) only ever serves jobs of one key: after a job it is reset and may
   * take that key's next job, never another key's. Jobs without a key share
   * windows only with each other.
   */
  keyId?: string;
  /** "png" is any image (see image.format). */
  kind: "pdf" | "png";
  /** PDF only. Absent for raw HTML: the document's CSS `@page` rules decide (A4 otherwise). */
  page?: PageSettings;
  /** PDF only. */
  print?: PrintSettings;
  /** PNG only: the exact output size in CSS pixels (times deviceScaleFactor in device pixels), its format and background. */
  image?: { width: number; height: number; deviceScaleFactor?: 1 | 2 | 3; format?: ImageFormat; quality?: number; omitBackground?: boolean };
  /** Waited for after the document loaded, within the deadline; not met fails the job `not_ready`. */
  waitFor?: WaitCondition;
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
   * with `script_error`, naming the exception's first line; "ignore" renders anyway.
   */
  scriptErrors?: "fail" | "ignore";
  /**
   * Files the document refers to by the relative URL `assets/<name>` (an own
   * template's stored assets), served from here, never fetched.
   */
  assets?: ReadonlyMap<string, Uint8Array>;
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
  | "source_unavailable";

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
   * The DevTools endpoint (e.g. http://127.0.0.1:9222) of a Chromium started elsewhere, run
   * by chromium-main.ts: the engine connects to it instead of launching one, waits for it at
   * start, and reconnects when it restarts. `executablePath`, `sandbox` and `rendererHeapMiB`
   * are then that process's.
   */
  connectUrl?: string;
}

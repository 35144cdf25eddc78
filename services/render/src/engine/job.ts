import type { Protocol } from "puppeteer-core";
import { noop } from "./async";
import type { PageCredentials } from "./credentials";
import { FifoSemaphore } from "./fifo";
import { RenderFailure, type RenderJob } from "./types";

export interface Limits {
  maxPages: number;
  maxOutputBytes: number;
}

/** The uncaught exceptions of one document that are kept (the rest are not listed). */
export const MAX_SCRIPT_ERRORS = 20;

/** Sub-requests of one document the fetcher works on at once; the rest wait. */
const FETCHES_PER_JOB = 16;

/**
 * The page (or the whole browser) went away before the job's document started
 * running: the document cannot be the cause, so the engine runs it again.
 */
export class NotStarted extends Error {
  constructor(readonly failure: RenderFailure) {
    super(failure.message);
  }
}

/** One render's view of the page: its document, the origins it reached, its failure if any. */
export class ActiveJob {
  readonly documentUrl: string;
  /** The document is in the page (or being served): top-level navigations from now on are blocked. */
  documentServed = false;
  /** The document was handed to a page that was alive: from here on a failure may be the document's doing. */
  started = false;
  readonly origins: Set<string>;
  readonly controller = new AbortController();
  readonly fetches = new FifoSemaphore(FETCHES_PER_JOB);
  /** What the job's sub-resources may still add up to (decoded bytes). */
  budgetLeft: number;
  failure: RenderFailure | undefined;
  /** Set when the page went away under the job: the failure it ends with, once the cause is known. */
  verdict: Promise<RenderFailure> | undefined;
  /** The first lines of the document's uncaught exceptions, in order (at most MAX_SCRIPT_ERRORS). */
  readonly scriptErrors: string[] = [];
  /** An uncaught exception said an allocation failed: the document ran out of its renderer's memory. */
  outOfMemory = false;
  /**
   * The document asked for something beyond itself, data: and blob: aside (a sub-resource, an asset,
   * a 404 of its own origin, a refused URL): Chromium may keep what it got for the same Document, so
   * the next document is not written over this one (see README.md, "Script-free documents").
   */
  requested = false;
  /** Sub-requests paused and not yet answered, and when the last one came or ended (network_idle). */
  subrequestsInFlight = 0;
  lastSubrequestAt = performance.now();
  /** When waiting for the page to be ready must end (performance.now() time), leaving room to print before the deadline. */
  readyBy = Infinity;
  /** An image, stylesheet, font or script that does not load fails the job (RenderJob.options.failOnResourceError). */
  failOnResourceError = false;
  /** A url source's credentials, for its sub-requests on its origin (RenderJob.credentials). */
  credentials: PageCredentials | undefined;
  readonly interrupted: Promise<never>;
  private rejectInterrupted!: (failure: RenderFailure) => void;

  constructor(
    readonly origin: string,
    readonly html: string,
    readonly limits: Limits,
    readonly budgetBytes: number,
    /** The files served at the document's own origin under /assets/. */
    readonly assets: ReadonlyMap<string, Uint8Array> = new Map(),
  ) {
    this.budgetLeft = budgetBytes;
    this.documentUrl = `${origin}/`;
    this.origins = new Set([origin]);
    this.interrupted = new Promise<never>((_, reject) => (this.rejectInterrupted = reject));
    this.interrupted.catch(noop);
  }

  interrupt(failure: RenderFailure): void {
    if (this.failure) return;
    this.failure = failure;
    this.controller.abort(failure);
    this.rejectInterrupted(failure);
  }

  /**
   * A sub-request of the document got no answer (`status` undefined: refused, unreachable, timed
   * out) or an HTTP error status: when the job is strict about its resources and it was an image,
   * stylesheet, font or script, the job fails naming it.
   */
  resourceFailed(resourceType: string, url: string, status?: number): void {
    const kind = STRICT_RESOURCE_TYPES[resourceType];
    if (!this.failOnResourceError || !this.documentServed || kind === undefined) return;
    this.interrupt(resourceError(kind, resourceName(url, this.origin), status));
  }

  /** The page is gone, for a reason the browser settles shortly (see Generation.pageGone): the job ends with it. */
  interruptWhen(verdict: Promise<RenderFailure>): void {
    if (this.failure || this.verdict) return;
    this.verdict = verdict;
    void verdict.then((failure) => this.interrupt(failure));
  }
}

/** The kinds of sub-resource options.fail_on_resource_error holds the document to, by Chromium's resource type. */
const STRICT_RESOURCE_TYPES: Partial<Record<string, string>> = { Image: "image", Stylesheet: "stylesheet", Font: "font", Script: "script" };

/** A sub-resource as a failure names it: scheme, host and path (never its query or fragment); the document's own files by their path. */
export function resourceName(url: string, documentOrigin: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "a malformed URL";
  }
  if (parsed.protocol === "data:" || parsed.protocol === "blob:") return `a ${parsed.protocol} URL`;
  if (parsed.origin === documentOrigin) return `${parsed.pathname.slice(1)} (the document's own)`;
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

export function resourceError(kind: string, name: string, status: number | undefined): RenderFailure {
  const why = status === undefined ? "no answer (refused, unreachable or timed out)" : `HTTP ${status}`;
  return new RenderFailure("resource_error", `the document's ${kind} ${name} failed to load: ${why} (options.fail_on_resource_error)`);
}

/** How long a render may run from the moment it gets a page, and the deadline its failure names. */
export interface Deadline {
  ms: number;
  namedMs: number;
}

/** The job's own deadline where it is the lower one, the engine's otherwise. */
export function deadlineOf(job: Pick<RenderJob, "deadlineMs" | "jobDeadlineMs">, engineMs: number): Deadline {
  if (!job.deadlineMs || job.deadlineMs <= 0 || job.deadlineMs >= engineMs) return { ms: engineMs, namedMs: engineMs };
  return { ms: job.deadlineMs, namedMs: Math.min(job.jobDeadlineMs ?? job.deadlineMs, engineMs) };
}

export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1))} s`;
}

export function resourceBudget(budgetBytes: number): RenderFailure {
  return new RenderFailure(
    "resource_budget",
    `the document's sub-resources add up to more than ${Math.round(budgetBytes / 1024 / 1024)} MiB (the sub-resource budget)`,
  );
}

export function pageCap(maxPages: number): RenderFailure {
  return new RenderFailure("page_cap", `document has more than ${maxPages} pages (the page cap)`);
}

/** A size as a limit's message says it: whole MiB, or bytes. */
export function byteSize(bytes: number): string {
  return bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

export function outputCap(maxBytes: number): RenderFailure {
  return new RenderFailure("output_cap", `output is larger than ${byteSize(maxBytes)} (the output size cap)`);
}

/** The exception's first line ("TypeError: x is not a function"), at most 300 characters. */
export function exceptionLine(details: Protocol.Runtime.ExceptionDetails): string {
  const exception = details.exception;
  const text = exception?.description ?? (exception && "value" in exception ? `Uncaught ${String(exception.value)}` : details.text);
  const line = text.split("\n", 1)[0]!.trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

export function scriptError(line: string): RenderFailure {
  return new RenderFailure("script_error", `the document's script threw an uncaught exception: ${line}`);
}

/** What V8 throws when the renderer's data limit refuses an ArrayBuffer or a WebAssembly memory. */
const ALLOCATION_FAILED = /^(Uncaught )?RangeError: (Array buffer allocation failed|WebAssembly\.Memory\(\): could not allocate memory|.*Out of memory)/;

export function allocationFailed(line: string): boolean {
  return ALLOCATION_FAILED.test(line);
}

export function memoryLimit(processMemoryMiB: number): RenderFailure {
  return new RenderFailure("memory_limit", `the document ran out of memory: more than ${processMemoryMiB} MiB (the renderer memory limit)`);
}

export function rendererCrashed(processMemoryMiB: number): RenderFailure {
  return new RenderFailure(
    "renderer_crashed",
    `the document's renderer crashed while it ran (e.g. it ran out of memory: ${processMemoryMiB} MiB, the renderer memory limit, or its heap)`,
  );
}

export function windowClosed(): RenderFailure {
  return new RenderFailure("window_closed", "the document closed its own window before it could be printed");
}

export function pagesLost(): RenderFailure {
  return new RenderFailure("page_lost", "the document's page was lost together with other pages while it ran");
}

export function browserStopped(): RenderFailure {
  return new RenderFailure("crashed", "the browser stopped while rendering the document", true);
}

export function blockedNavigation(): RenderFailure {
  return new RenderFailure("blocked_navigation", "the document tried to navigate away from itself, which is not allowed");
}

/**
 * Height-based and forced-break-based lower bounds on the page count. Both are
 * halved before comparing, so that a document near the cap is printed (and
 * judged by its real page count) rather than refused on a guess.
 */
export function estimatedPagesOverCap(estimate: { height: number; breaks: number }, pageHeightPx: number, maxPages: number): boolean {
  const byHeight = pageHeightPx > 0 ? estimate.height / pageHeightPx / 2 : 0;
  const byBreaks = estimate.breaks / 2;
  return Math.max(byHeight, byBreaks) > maxPages;
}

export function probeScript(maxPages: number, png: boolean): string {
  return `(async (cap, png) => {
  if (document.fonts && document.fonts.ready) await document.fonts.ready;
  if (png) { window.scrollTo(0, 0); return null; }
  const root = document.documentElement;
  const height = Math.max(root ? root.scrollHeight : 0, document.body ? document.body.scrollHeight : 0);
  const all = document.getElementsByTagName("*");
  let breaks = 0;
  if (all.length > cap) {
    const forced = new Set(["page", "left", "right", "recto", "verso", "always"]);
    for (let i = 0; i < all.length && breaks <= 2 * cap + 2; i++) {
      const style = getComputedStyle(all[i]);
      if ((forced.has(style.breakBefore) || forced.has(style.breakAfter)) && all[i].getClientRects().length) breaks++;
    }
  }
  return { height, breaks };
})(${maxPages}, ${png})`;
}

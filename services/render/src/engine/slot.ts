import type { CDPSession, Protocol } from "puppeteer-core";
import { noop, withTimeout } from "./async";
import type { PageCredentials } from "./credentials";
import { answerRequest } from "./interception";
import {
  ActiveJob,
  NotStarted,
  blockedNavigation,
  estimatedPagesOverCap,
  allocationFailed,
  exceptionLine,
  MAX_SCRIPT_ERRORS,
  memoryLimit,
  pageCap,
  probeScript,
  scriptError,
  seconds,
  type Deadline,
  type Limits,
} from "./job";
import { newDocumentOrigin } from "./network";
import type { SlotSettings } from "./options";
import { PageEmulation, SHELL_HTML, WARM_UP, clearJobState, enableDomains, openPage, serveHtml } from "./page";
import { contentTypeOf, type JobLayout } from "./paper";
import { captureImage, printPdf, requireLanguage } from "./print";
import { readinessBudgetMs, waitUntilReady } from "./readiness";
import { RenderFailure, type RenderOutput } from "./types";

/** How Chromium reported a page gone: its renderer crashed, or its target closed. */
export type PageLoss = "crashed" | "closed";

export interface SlotDeps extends SlotSettings {
  /** The browser-level session of the slot's browser. */
  browser: CDPSession;
  /** Told when the page's own session sees its renderer crash; the generation decides whose fault it was. */
  onGone: (slot: Slot, loss: PageLoss) => void;
}

/** A document the page holds between jobs, at its origin: a fresh shell, or a job's script-free document (`written`). */
type PageDocument = { origin: string; written: boolean };

/** Bound on the CDP steps that tidy up a page (wipe, dispose). */
const HOUSEKEEPING_MS = 5_000;
/** How long a CDP call that failed for no known cause waits for the page's loss to be reported (a closing window fails calls first). */
const LOSS_REPORT_MS = 1_000;

/**
 * One browser context with one page, driven over its own CDP session (no
 * puppeteer Page: its per-navigation bookkeeping costs CPU the engine does not
 * need). Every request of the page is intercepted and answered by the engine.
 *
 * Between jobs the page is navigated to an empty "shell" document, served by
 * the interception at the next job's own fresh origin. That navigation unloads
 * the previous job's document (its window, timers, workers, everything), and
 * gives the next job a brand-new window that no script has touched. The job's
 * HTML is then written into that window (Page.setDocumentContent), so the
 * navigation is paid for between jobs instead of on the job's clock.
 */
export class Slot {
  /** Set when the page's renderer or target went away: the slot must be replaced. */
  broken = false;
  /** Chromium reported the page gone (lose()): never used again. */
  gone = false;
  /** The engine itself is throwing the page away (destroy()): its closing is nobody's failure. */
  disposing = false;
  /** The key whose jobs this window serves, from its first job on; never another's. */
  owner: string | undefined;
  private job: ActiveJob | undefined;
  private readonly emulation = new PageEmulation();
  /** Every origin the last job's documents and sub-requests had: what the wipe clears. */
  private lastOrigins: string[] = [];
  private loadWaiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  /** Who waits for lose(). */
  private lossWaiters: Array<() => void> = [];
  /** The shell being navigated to (served once). */
  private pendingShellUrl: string | undefined;
  /**
   * What the page holds for the next job: a fresh shell, or (`written`) the script-free document the
   * last job left, which asked for nothing beyond itself and which the key's next script-free job is
   * written over, with no new document (see README.md).
   */
  private document: PageDocument | undefined;
  /** The last job run was written over the previous job's document. */
  lastRunWroteOver = false;

  private constructor(
    private readonly deps: SlotDeps,
    readonly contextId: string,
    readonly targetId: string,
    private readonly session: CDPSession,
  ) {}

  /** Creates a context and its page, with interception, dialogs and downloads handled, and loads a shell. */
  static open(deps: SlotDeps): Promise<Slot> {
    return openPage(deps.browser, async ({ contextId, targetId, session }) => {
      const slot = new Slot(deps, contextId, targetId, session);
      slot.listen();
      await enableDomains(session);
      await withTimeout(slot.loadShell(), HOUSEKEEPING_MS, "loading the first shell");
      return slot;
    });
  }

  private listen(): void {
    const s = this.session;
    s.on("Fetch.requestPaused", (e: Protocol.Fetch.RequestPausedEvent) => this.onRequestPaused(e));
    s.on("Page.loadEventFired", () => {
      for (const waiter of this.loadWaiters.splice(0)) waiter.resolve();
    });
    s.on("Page.frameNavigated", (e: Protocol.Page.FrameNavigatedEvent) => {
      const job = this.job;
      // A top-level navigation the interception did not see (about:, javascript:, history).
      if (job?.documentServed && !e.frame.parentId && e.frame.url !== job.documentUrl) job.interrupt(blockedNavigation());
    });
    s.on("Page.javascriptDialogOpening", (e: Protocol.Page.JavascriptDialogOpeningEvent) => {
      // alert/confirm/prompt are dismissed; beforeunload is accepted so the page can always be left.
      // A window a document opened a dialog in is not reused: it may be in a state the reset does not know.
      if (this.job) this.broken = true;
      void s.send("Page.handleJavaScriptDialog", { accept: e.type === "beforeunload" }).catch(noop);
    });
    s.on("Runtime.exceptionThrown", (e: Protocol.Runtime.ExceptionThrownEvent) => {
      const job = this.job;
      if (!job?.documentServed) return;
      const line = exceptionLine(e.exceptionDetails);
      if (job.scriptErrors.length < MAX_SCRIPT_ERRORS) job.scriptErrors.push(line);
      if (allocationFailed(line)) job.outOfMemory = true;
    });
    s.on("Inspector.targetCrashed", () => this.deps.onGone(this, "crashed"));
  }

  /**
   * The page's renderer crashed or its target closed, which Chromium reported
   * while the browser was up: the job on it ends with `verdict` (whose fault it
   * was, settled by the generation), and the page is never used again.
   */
  lose(verdict: Promise<RenderFailure>): void {
    this.gone = true;
    this.broken = true;
    this.job?.interruptWhen(verdict);
    for (const waiter of this.loadWaiters.splice(0)) waiter.reject(new Error("the page is gone"));
    for (const resolve of this.lossWaiters.splice(0)) resolve();
  }

  /** Resolves when the page's loss is reported, or after `ms`. */
  private lossReported(ms: number): Promise<void> {
    if (this.gone) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.lossWaiters = this.lossWaiters.filter((waiter) => waiter !== done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.lossWaiters.push(done);
    });
  }

  /** The page's renderer or target is gone (seen here or by the browser session). */
  markBroken(failure: RenderFailure): void {
    this.broken = true;
    this.job?.interrupt(failure);
    for (const waiter of this.loadWaiters.splice(0)) waiter.reject(failure);
  }

  /** Whether the page can be wiped and reused (rather than thrown away). */
  get reusable(): boolean {
    return !this.broken;
  }

  /** Renders one job on this page; the deadline starts now. */
  async run(
    html: string,
    kind: "pdf" | "png",
    layout: JobLayout,
    deadline: Deadline,
    {
      signal,
      limits = this.deps,
      scriptErrors = "fail",
      failOnResourceError = false,
      assets,
      credentials,
      scriptFree = false,
    }: {
      signal?: AbortSignal;
      limits?: Limits;
      scriptErrors?: "fail" | "ignore";
      failOnResourceError?: boolean;
      assets?: ReadonlyMap<string, Uint8Array>;
      credentials?: PageCredentials;
      /** The document runs no script (isScriptFree): script execution is off for it, and it may be written over the key's last such document. */
      scriptFree?: boolean;
    } = {},
  ): Promise<RenderOutput> {
    const kept = this.document;
    const base = kept && !(kept.written && (!scriptFree || this.emulation.changes(layout))) ? kept : await this.loadFreshShell();
    const started = performance.now();
    this.document = undefined;
    this.lastRunWroteOver = base.written;
    const job = new ActiveJob(base.origin, html, limits, this.deps.subresourceBudgetBytes, assets);
    this.job = job;
    job.readyBy = started + readinessBudgetMs(deadline.ms);
    job.failOnResourceError = failOnResourceError;
    job.credentials = credentials;
    const timer = setTimeout(() => job.interrupt(new RenderFailure("deadline", `render exceeded the ${seconds(deadline.namedMs)} deadline`)), deadline.ms);
    const onAbort = () => job.interrupt(new RenderFailure("crashed", "the render was cancelled"));
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      if (signal?.aborted) onAbort();
      const work = this.execute(job, kind, layout, scriptFree, scriptErrors);
      work.catch(noop);
      const { data, pages } = await Promise.race([work, job.interrupted]);
      if (scriptFree && !job.requested) this.document = { origin: job.origin, written: true };
      return {
        data,
        pages,
        contentType: contentTypeOf(kind, layout),
        renderMs: Math.round(performance.now() - started),
        ...(job.scriptErrors.length > 0 ? { scriptErrors: [...job.scriptErrors] } : {}),
      };
    } catch (err) {
      // A window whose job failed may still be running the document's script, or be in a state the
      // reset does not know (a hung script, a crashed renderer): it is thrown away, never reused.
      this.broken = true;
      if (signal?.aborted) throw signal.reason;
      // The page went away: the job fails for the cause the browser settles, not for the CDP call that failed
      // first (a window being closed fails calls before Chromium reports the target gone).
      if (!job.failure && !(err instanceof RenderFailure)) await this.lossReported(LOSS_REPORT_MS);
      if (job.verdict) await job.verdict;
      if (!job.started) {
        // Nothing of the document ran: whatever failed was the page's or the browser's fault.
        throw new NotStarted(job.failure ?? new RenderFailure("crashed", "the browser failed before the document could be rendered"));
      }
      if (job.failure) throw job.failure;
      if (err instanceof RenderFailure) throw err;
      this.deps.logger?.warn({ err }, "render failed unexpectedly");
      throw new RenderFailure("crashed", "the renderer failed while rendering the document");
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      job.controller.abort();
      this.job = undefined;
      this.lastOrigins = [...job.origins];
      // An interruption that came after the work was done (the deadline's timer, a late loss).
      if (job.failure) {
        this.broken = true;
        this.document = undefined;
      }
    }
  }

  /**
   * A first print initialises fonts and the printing pipeline in the page's
   * renderer (~150 ms); doing it here keeps that off the first real job.
   */
  async warmUp(): Promise<void> {
    await this.run(WARM_UP.html, "pdf", WARM_UP.layout, { ms: HOUSEKEEPING_MS, namedMs: HOUSEKEEPING_MS }, { limits: WARM_UP.limits });
    await this.wipe();
  }

  private async execute(
    job: ActiveJob,
    kind: "pdf" | "png",
    layout: JobLayout,
    scriptFree: boolean,
    scriptErrors: "fail" | "ignore",
  ): Promise<{ data: Uint8Array; pages: number }> {
    const s = this.session;
    await this.emulation.apply(s, layout, scriptFree);
    const loaded = this.nextLoad();
    // document.open/write/close into the shell's untouched window, at the job's origin (or over the
    // key's last script-free document: same window and Document, none of it touched by script).
    job.documentServed = true;
    job.started = true;
    await s.send("Page.setDocumentContent", { frameId: this.targetId, html: job.html });
    await loaded;
    if (layout.waitFor) await waitUntilReady(s, job, layout.waitFor, job.readyBy - performance.now());

    // Fonts, and a cheap estimate so that a 10 000-page document fails before it is printed.
    const probe = await s.send("Runtime.evaluate", {
      expression: probeScript(job.limits.maxPages, kind === "png"),
      awaitPromise: true,
      returnByValue: true,
    });
    // Memory it could not have fails the job whether its script errors count or not: it is a limit.
    if (job.outOfMemory) throw memoryLimit(this.deps.processMemoryMiB);
    if (scriptErrors === "fail" && job.scriptErrors[0] !== undefined) throw scriptError(job.scriptErrors[0]);
    const estimate = probe.exceptionDetails ? undefined : (probe.result.value as { height: number; breaks: number } | null);
    if (kind === "pdf" && estimate && estimatedPagesOverCap(estimate, layout.pageHeightPx, job.limits.maxPages)) {
      throw pageCap(job.limits.maxPages);
    }

    if (kind === "pdf" && layout.needsLanguage) await requireLanguage(s);
    return kind === "png" ? captureImage(s, layout, job.limits.maxOutputBytes) : printPdf(s, job, layout);
  }

  private nextLoad(): Promise<void> {
    if (this.broken) {
      // Awaited only once the document is handed over: a job interrupted before then never awaits it.
      const refused = Promise.reject(new Error("page is broken"));
      refused.catch(noop);
      return refused;
    }
    const loaded = new Promise<void>((resolve, reject) => this.loadWaiters.push({ resolve, reject }));
    loaded.catch(noop);
    return loaded;
  }

  /** Navigates to an empty document at a fresh origin (served by the interception). */
  private async loadShell(): Promise<PageDocument> {
    const origin = newDocumentOrigin();
    this.pendingShellUrl = `${origin}/`;
    const loaded = this.nextLoad();
    const nav = await this.session.send("Page.navigate", { url: this.pendingShellUrl });
    if (nav.errorText) throw new Error(`shell: ${nav.errorText}`);
    await loaded;
    this.pendingShellUrl = undefined;
    return { origin, written: false };
  }

  /**
   * Leaves nothing of the last job behind. Loading the next job's shell unloads
   * the last document (its window, timers, workers, locks go with it); then,
   * with no script of that job left anywhere, cookies, history, window.name and
   * the storage of every origin the job reached are cleared.
   */
  async wipe(): Promise<void> {
    // A script-free document that asked for nothing left nothing beyond itself: it stays until the
    // next job writes over it (script-free) or unloads it (loadFreshShell).
    if (this.document?.written && !this.broken) return;
    this.document = undefined;
    this.document = await this.reset();
  }

  /** The wipe's work: a fresh shell, then the last job's state cleared; resolves to the shell. */
  private async reset(): Promise<PageDocument> {
    const shell = await withTimeout(
      (async () => {
        const loaded = await this.loadShell();
        await clearJobState(this.session, this.lastOrigins);
        return loaded;
      })(),
      HOUSEKEEPING_MS,
      "wipe",
    );
    if (this.broken) throw new Error("page broke during the wipe");
    return shell;
  }

  /**
   * The wipe, for a job that may not be written over the page's document (it has script, or
   * another viewport or media; or that document asked for something once its job had ended):
   * script never runs where another document ran. Off the job's deadline; nothing of the job has
   * run if it fails.
   */
  private async loadFreshShell(): Promise<PageDocument> {
    this.document = undefined;
    try {
      return await this.reset();
    } catch (err) {
      this.broken = true;
      this.deps.logger?.warn({ err }, "could not give a job a fresh shell");
      throw new NotStarted(new RenderFailure("crashed", "the browser failed before the document could be rendered"));
    }
  }

  private onRequestPaused(e: Protocol.Fetch.RequestPausedEvent): void {
    const job = this.job;
    const shellUrl = this.pendingShellUrl;
    // A request made after its job ended: that document is not written over.
    if (!job && this.document?.written) this.document = undefined;
    if (!job && shellUrl && e.frameId === this.targetId && e.resourceType === "Document" && e.request.url === shellUrl) {
      this.pendingShellUrl = undefined; // served once
      void serveHtml(this.session, e.requestId, SHELL_HTML).catch(noop);
      return;
    }
    const { session, targetId } = this;
    const { fetchSubresource: fetcher, subrequestTimeoutMs } = this.deps;
    answerRequest({ session, targetId, job, fetcher, subrequestTimeoutMs, current: () => this.job === job }, e);
  }

  /**
   * Throws the context away. A renderer stuck in `while(true){}` is stopped
   * first; returns false if Chromium did not confirm within the bound (the
   * browser is then presumed hung).
   */
  async destroy(): Promise<boolean> {
    this.disposing = true;
    this.markBroken(new RenderFailure("crashed", "the page was closed"));
    void this.session.send("Runtime.terminateExecution").catch(noop);
    try {
      await withTimeout(this.deps.browser.send("Target.disposeBrowserContext", { browserContextId: this.contextId }), HOUSEKEEPING_MS, "dispose");
      return true;
    } catch (err) {
      return err instanceof Error && /not found|Failed to find context/i.test(err.message);
    }
  }
}

import { FifoSemaphore } from "./fifo";
import { Generation, type GenerationOptions } from "./generation";
import { layoutOf } from "./paper";
import { deadlineOf, NotStarted } from "./job";
import { engineSettings } from "./options";
import { isScriptFree } from "./script-free";
import type { Slot } from "./slot";
import type { PageCredentials } from "./credentials";
import { fetchPage } from "./url-source";
import { PoolClosed } from "./window-pool";
import { RenderFailure, type EngineLogger, type EngineOptions, type RenderCallOptions, type RenderJob, type RenderOutput } from "./types";

/** The longest a job waits for a browser to come back before failing as `crashed`. */
const MIN_BROWSER_WAIT_MS = 30_000;
const MAX_RELAUNCH_BACKOFF_MS = 10_000;
/** Runs of a job whose browser died before its document was delivered. */
const MAX_ATTEMPTS_NOT_STARTED = 3;

export interface EngineStats {
  /** Renders that reached a page (succeeded or failed). */
  renders: number;
  /** Browser launches after the first: crashes, hangs and recycling. */
  relaunches: number;
  /** Browsers that disconnected unexpectedly (crashed or killed). */
  crashes: number;
  browserPid: number | undefined;
  /** The browser runs with Chromium's own sandbox, as it reports it (undefined: no browser, or it did not say). */
  sandboxed: boolean | undefined;
  /** A browser is up and handing out pages (false while one is relaunched or reconnected). */
  browserLive: boolean;
  /** Slots rendering right now. */
  busySlots: number;
  /** Slots that could start a render right now without waiting. */
  warmSlots: number;
  /** Renders waiting for a slot. */
  queued: number;
  /** Pages being wiped or prepared in the background. */
  preparing: number;
  /** The live browser's windows (browser contexts with their page), busy, free or being opened. */
  windows: number;
  /** Windows the live browser opened since it started (its first `slots + sparePages` included). */
  windowsOpened: number;
  /** Renders written over their key's previous script-free document, with no new document (see README.md). */
  writtenOver: number;
}

/**
 * Renders HTML to PDF or PNG on one long-lived Chromium. `slots` renders run at
 * once, each in a window (browser context and page) of its key's, reset and
 * loaded before the job arrived, or a fresh one; the rest wait in FIFO order. See README.md for the isolation and
 * network model and the measurements behind it.
 */
export class RenderEngine {
  private readonly permits: FifoSemaphore;
  private readonly generationOptions: GenerationOptions;
  private readonly generations = new Set<Generation>();
  private current: Generation | undefined;
  private launching: Promise<Generation> | undefined;
  private nextGenerationId = 1;
  private closed = false;
  private closing: Promise<void> | undefined;
  private renders = 0;
  private relaunches = 0;
  private writtenOver = 0;
  private crashes = 0;
  private readonly deadlineMs: number;
  private readonly recycleAfterRenders: number;
  private readonly logger: EngineLogger | undefined;

  private constructor(private readonly opts: EngineOptions) {
    if (!Number.isInteger(opts.slots) || opts.slots < 1) throw new Error("EngineOptions.slots must be a positive integer");
    this.permits = new FifoSemaphore(opts.slots);
    const { deadlineMs, recycleAfterRenders, ...generation } = engineSettings(opts);
    this.deadlineMs = deadlineMs;
    this.recycleAfterRenders = recycleAfterRenders;
    this.logger = opts.logger;
    this.generationOptions = { ...generation, logger: opts.logger, onDeath: (g) => this.onDeath(g) };
  }

  /**
   * Launches the browser and warms every slot before resolving. A browser started
   * elsewhere (`connectUrl`) may come up after the worker: it is waited for.
   */
  static async start(opts: EngineOptions): Promise<RenderEngine> {
    const engine = new RenderEngine(opts);
    engine.current = opts.connectUrl === undefined ? await engine.launch() : await engine.firstConnection();
    engine.logger?.info({ pid: engine.current.pid, slots: opts.slots }, "render engine started");
    return engine;
  }

  /**
   * Renders one job. Rejects with RenderFailure (see its `reason`), or with
   * `signal.reason` if the caller aborts.
   */
  async render(job: RenderJob, { signal, holdPageUntil }: RenderCallOptions = {}): Promise<RenderOutput> {
    if (this.closed) throw shuttingDown();
    const layout = layoutOf(job);
    const deadline = deadlineOf(job, this.deadlineMs);
    // A customer's waitFor expression is script, whatever the document is.
    const scriptFree = isScriptFree(job.html) && !(layout.waitFor && "expression" in layout.waitFor);
    const release = await this.permits.acquire(signal);
    try {
      for (let attempt = 1; ; attempt++) {
        const { slot, generation } = await this.takeSlot(job.keyId ?? "", signal);
        if (generation.countRender() >= this.recycleAfterRenders) this.recycle(generation);
        try {
          const output = await slot.run(job.html, job.kind, layout, deadline, {
            signal,
            scriptErrors: job.scriptErrors,
            failOnResourceError: job.options?.failOnResourceError === true,
            assets: job.assets,
            credentials: job.credentials,
            scriptFree,
          });
          if (slot.lastRunWroteOver) this.writtenOver++;
          return output;
        } catch (err) {
          if (!(err instanceof NotStarted)) throw err;
          // The page or browser failed before this document ran: not the document's doing.
          if (this.closed || attempt >= MAX_ATTEMPTS_NOT_STARTED) throw err.failure;
        } finally {
          this.renders++;
          if (holdPageUntil) void holdPageUntil.finally(() => generation.release(slot));
          else generation.release(slot);
        }
      }
    } finally {
      release();
    }
  }

  /**
   * The HTML of a url source's page, fetched through the engine's fetcher (the
   * guard every sub-resource goes through) within `timeoutMs`, with a <base>
   * naming the page's final URL. Rejects with RenderFailure `source_unavailable`.
   */
  fetchPage(url: string, options: { timeoutMs: number; signal?: AbortSignal; credentials?: PageCredentials }): Promise<string> {
    return fetchPage(this.opts.fetchSubresource, url, options);
  }

  /** Kills the browser(s); renders in flight or queued fail with `crashed`. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      this.permits.rejectAll(shuttingDown());
      const launching = this.launching?.catch(() => undefined);
      await Promise.all([...this.generations].map((g) => g.close()));
      const late = await launching;
      if (late) await late.close();
      this.current = undefined;
    })();
    return this.closing;
  }

  stats(): EngineStats {
    const free = this.opts.slots - this.permits.inUse;
    return {
      renders: this.renders,
      relaunches: this.relaunches,
      crashes: this.crashes,
      browserPid: this.current?.pid,
      sandboxed: this.current?.sandboxed,
      browserLive: this.current?.state === "live",
      busySlots: this.permits.inUse,
      warmSlots: Math.max(0, Math.min(this.current?.warmPages ?? 0, free)),
      queued: this.permits.queued,
      preparing: this.current?.preparing ?? 0,
      windows: this.current?.windows ?? 0,
      windowsOpened: this.current?.opened ?? 0,
      writtenOver: this.writtenOver,
    };
  }

  /** A warm window of the live browser for `key`'s job; waits out a relaunch, within a bound. */
  private async takeSlot(key: string, signal?: AbortSignal): Promise<{ slot: Slot; generation: Generation }> {
    const giveUp = AbortSignal.timeout(Math.max(this.deadlineMs, MIN_BROWSER_WAIT_MS));
    const waitSignal = signal ? AbortSignal.any([signal, giveUp]) : giveUp;
    for (;;) {
      if (this.closed) throw shuttingDown();
      try {
        const generation = await this.liveGeneration(waitSignal);
        return { slot: await generation.take(key, waitSignal), generation };
      } catch (err) {
        if (err instanceof PoolClosed) continue;
        if (signal?.aborted) throw signal.reason;
        if (giveUp.aborted) throw new RenderFailure("crashed", "no browser was available to render the document");
        throw err;
      }
    }
  }

  private async liveGeneration(signal: AbortSignal): Promise<Generation> {
    if (this.current?.state === "live") return this.current;
    this.launching ??= this.relaunch();
    const aborted = new Promise<never>((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    aborted.catch(() => undefined);
    await Promise.race([this.launching, aborted]);
    throw new PoolClosed(); // loop round: current is set now
  }

  private async launch(): Promise<Generation> {
    const generation = await Generation.launch(this.nextGenerationId++, this.generationOptions);
    this.generations.add(generation);
    return generation;
  }

  private async firstConnection(): Promise<Generation> {
    for (let failures = 0; ; failures++) {
      try {
        return await this.launch();
      } catch (err) {
        this.logger?.warn({ err, url: this.opts.connectUrl, failures: failures + 1 }, "Chromium does not answer yet");
        await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** failures, MAX_RELAUNCH_BACKOFF_MS)));
      }
    }
  }

  /** Launches a replacement until one comes up (or the engine closes), then makes it current. */
  private relaunch(): Promise<Generation> {
    const attempt = async (): Promise<Generation> => {
      for (let failures = 0; ; failures++) {
        if (this.closed) throw shuttingDown();
        try {
          const generation = await this.launch();
          if (this.closed) {
            await generation.close();
            throw shuttingDown();
          }
          const previous = this.current;
          this.current = generation;
          for (const g of this.generations) if (g.state === "dead") this.generations.delete(g);
          this.relaunches++;
          previous?.retire();
          this.logger?.info({ pid: generation.pid, generation: generation.id, relaunches: this.relaunches }, "browser relaunched");
          return generation;
        } catch (err) {
          if (this.closed) throw shuttingDown();
          this.logger?.error({ err, failures: failures + 1 }, "browser launch failed");
          await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** failures, MAX_RELAUNCH_BACKOFF_MS)));
        }
      }
    };
    const launching = attempt().finally(() => {
      if (this.launching === launching) this.launching = undefined;
    });
    launching.catch(() => undefined);
    this.launching = launching;
    return launching;
  }

  private onDeath(generation: Generation): void {
    this.generations.delete(generation);
    this.crashes++;
    if (this.closed || generation !== this.current) return;
    this.current = undefined;
    this.launching ??= this.relaunch();
  }

  /** Starts a new browser in the background; the old one finishes its jobs, then closes. */
  private recycle(generation: Generation): void {
    if (this.closed || generation !== this.current || this.launching) return;
    this.logger?.info({ generation: generation.id, renders: generation.renders }, "recycling the browser");
    this.relaunch();
  }
}

function shuttingDown(): RenderFailure {
  return new RenderFailure("crashed", "the render engine is shutting down");
}

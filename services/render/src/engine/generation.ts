import type { Browser, CDPSession, Protocol } from "puppeteer-core";
import { openChromium, type LaunchSettings } from "./chromium";
import { noop, withTimeout } from "./async";
import { WaiterQueue } from "./fifo";
import { browserStopped, pagesLost, rendererCrashed, windowClosed } from "./job";
import type { SlotSettings } from "./options";
import { Slot, type PageLoss } from "./slot";
import { RenderFailure, type EngineLogger } from "./types";

/** The generation stopped handing out pages (crash, recycle): take one from the next. */
export class GenerationGone extends Error {}

export interface GenerationOptions {
  launch: LaunchSettings;
  /** Windows, all fresh, that the browser starts with: slots + spares. */
  pages: number;
  /** Fresh windows kept warm for keys without a free window of their own. */
  spares: number;
  /** The most windows kept (busy, idle, fresh or being opened). */
  maxWindows: number;
  slot: SlotSettings;
  logger?: EngineLogger;
  /** Called once when the browser goes away without being asked to. */
  onDeath: (generation: Generation) => void;
}

const CLOSE_MS = 3_000;
const OPEN_FAILURES_BEFORE_RELAUNCH = 5;
/**
 * How long after a page is lost the browser is watched before the loss is
 * judged: a browser that dies or is killed takes its pages with it within
 * this time (or stops answering), and pages lost together fall in it.
 */
const LOSS_VERDICT_MS = 500;
/** The browser's answer to a round trip, when judging a lost page. */
const ANSWER_MS = 2_000;
/**
 * One Chromium process and its windows (a browser context and its page each).
 * A window serves one key only: a fresh one is bound to the key of its first
 * job, then reset after each job and kept for that key's next ones; when a
 * fresh window is needed and the browser holds `maxWindows`, the key window
 * idle the longest is disposed. Replaced as a whole when the browser
 * dies or hangs, and retired (after its in-flight jobs) when it is recycled.
 * With a Chromium started elsewhere (LaunchSettings.connectUrl), one connection
 * to it and its warm pages: closing or killing it drops the connection (which
 * disposes its contexts) and leaves the browser to whoever runs it.
 */
export class Generation {
  state: "live" | "retiring" | "dead" = "live";
  renders = 0;
  /** Windows opened since launch. */
  opened = 0;
  private busy = 0;
  /** Pages being wiped or opened: work the engine does between jobs. */
  private preparingCount = 0;
  /** Windows being opened, then warmed up (registered in `slots` by then). */
  private opening = 0;
  private warming = 0;
  private closing = false;
  private openFailures = 0;
  private readonly slots = new Map<string, Slot>();
  /** Reset windows bound to a key, free; the one idle the longest first. */
  private readonly idle: Slot[] = [];
  /** Warm windows no job has run in, free for any key. */
  private readonly fresh: Slot[] = [];
  /** Jobs waiting for a window, by key. */
  private readonly waiters = new WaiterQueue<Slot, string>();
  /** When pages were lost lately (performance.now()), to tell a page lost alone from pages lost together. */
  private losses: number[] = [];
  private closed: Promise<void> | undefined;

  private constructor(
    readonly id: number,
    private readonly browser: Browser,
    private readonly session: CDPSession,
    private readonly opts: GenerationOptions,
  ) {}

  /** Launches (or connects to) Chromium and resolves once every page is warm. */
  static async launch(id: number, opts: GenerationOptions): Promise<Generation> {
    const browser = await openChromium(opts.launch);
    let generation: Generation | undefined;
    try {
      const session = await browser.target().createCDPSession();
      generation = new Generation(id, browser, session, opts);
      const gen = generation;
      browser.on("disconnected", () => gen.onDisconnected());
      session.on("Target.targetCreated", (e: Protocol.Target.TargetCreatedEvent) => gen.onTargetCreated(e.targetInfo));
      session.on("Target.targetCrashed", (e: Protocol.Target.TargetCrashedEvent) => gen.pageGone(gen.slotOfTarget(e.targetId), "crashed"));
      session.on("Target.targetDestroyed", (e: Protocol.Target.TargetDestroyedEvent) => gen.pageGone(gen.slotOfTarget(e.targetId), "closed"));
      session.on("Target.detachedFromTarget", (e: Protocol.Target.DetachedFromTargetEvent) => {
        if (e.targetId) gen.pageGone(gen.slotOfTarget(e.targetId), "closed");
      });
      await session.send("Target.setDiscoverTargets", { discover: true });
      await Promise.all(Array.from({ length: opts.pages }, () => gen.openSlot(true)));
      return gen;
    } catch (err) {
      if (generation) await generation.close();
      else if (opts.launch.connectUrl !== undefined) await browser.disconnect().catch(noop);
      else await browser.close().catch(() => browser.process()?.kill("SIGKILL"));
      throw err;
    }
  }

  /** Chromium runs elsewhere (its own container); this generation is a connection to it. */
  private get remote(): boolean {
    return this.opts.launch.connectUrl !== undefined;
  }

  get pid(): number | undefined {
    return this.browser.process()?.pid;
  }

  /** Windows held, busy, free or being opened. */
  get windows(): number {
    return this.slots.size + this.opening;
  }

  /** Free windows: a key's own, reset, and fresh ones. */
  get warmPages(): number {
    return this.state === "live" ? this.idle.length + this.fresh.length : 0;
  }

  get preparing(): number {
    return this.state === "live" ? this.preparingCount : 0;
  }

  /**
   * A warm window for one job of `key`: one of the key's own, reset, or else a
   * fresh one, which is bound to the key from now on. Waits (FIFO among jobs that
   * could take the same window) for a reset or a fresh window to be ready.
   */
  take(key: string, signal?: AbortSignal): Promise<Slot> {
    if (this.state !== "live") return Promise.reject(new GenerationGone());
    const slot = this.takeFree(key);
    if (slot) {
      this.topUp();
      return Promise.resolve(slot);
    }
    const waiting = this.waiters.wait(signal, key);
    this.topUp();
    return waiting;
  }

  /** The key's own free window (the most recently used), or a fresh one bound to it; counted busy. */
  private takeFree(key: string): Slot | undefined {
    const own = this.idle.findLastIndex((slot) => slot.owner === key);
    const slot = own === -1 ? this.fresh.shift() : this.idle.splice(own, 1)[0];
    if (!slot) return undefined;
    slot.owner = key;
    this.busy++;
    return slot;
  }

  /**
   * Keeps `spares` fresh windows ready, and one more for each job waiting whose
   * key has no window of its own coming back (busy or being reset), opening them
   * while the browser holds fewer than `maxWindows` and disposing the key window
   * idle the longest otherwise.
   */
  private topUp(): void {
    if (this.state !== "live") return;
    const free = new Set([...this.idle, ...this.fresh]);
    const returning = new Set([...this.slots.values()].filter((slot) => !free.has(slot) && slot.reusable).map((slot) => slot.owner));
    const unserved = this.waiters.tags.filter((key) => !returning.has(key)).length;
    let short = this.opts.spares + unserved - this.fresh.length - this.opening - this.warming;
    for (; short > 0; short--) {
      if (this.windows >= this.opts.maxWindows) {
        const oldest = this.idle.shift();
        if (!oldest) return;
        this.discard(oldest);
      }
      void this.openSlot(false).catch(noop);
    }
  }

  /** Gives a window back after its job: reset and kept for its key, or thrown away. */
  release(slot: Slot): void {
    this.busy--;
    if (this.state === "dead") return;
    if (this.state === "retiring") {
      this.slots.delete(slot.contextId);
      if (this.busy === 0) void this.close();
      return;
    }
    if (slot.reusable) {
      this.preparingCount++;
      slot.wipe().then(
        () => {
          this.preparingCount--;
          this.makeIdle(slot);
        },
        (err: unknown) => {
          this.preparingCount--;
          if (this.state !== "live") return;
          this.opts.logger?.warn({ err, generation: this.id }, "page wipe failed; replacing the page");
          this.discard(slot);
          this.topUp();
        },
      );
    } else {
      this.discard(slot);
      this.topUp();
    }
  }

  /** Stops handing out pages; closes the browser once the jobs in flight are done. */
  retire(): void {
    if (this.state !== "live") return;
    this.state = "retiring";
    this.waiters.rejectAll(new GenerationGone());
    this.idle.length = 0;
    this.fresh.length = 0;
    if (this.busy === 0) void this.close();
  }

  /** Kills the browser: in-flight jobs fail with `crashed`. Never hangs. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      this.die(new RenderFailure("crashed", "the render engine is shutting down"));
      try {
        await withTimeout(this.remote ? this.browser.disconnect() : this.browser.close(), CLOSE_MS, "browser close");
      } catch {
        this.kill();
      }
    })();
    return this.closed;
  }

  /**
   * SIGKILL to the browser's whole process group (puppeteer starts it as a group
   * leader), so no renderer, zygote or GPU process outlives it. Used for a browser
   * that no longer answers; the disconnect then triggers a relaunch.
   */
  kill(): void {
    if (this.remote) {
      // Not ours to kill: the connection goes, and with it every context this generation made.
      void this.browser.disconnect().catch(noop);
      return;
    }
    const proc = this.browser.process();
    if (!proc?.pid) return;
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      try {
        proc.kill("SIGKILL");
      } catch {
        // already gone
      }
    }
  }

  private onDisconnected(): void {
    const unexpected = !this.closing && this.state !== "dead";
    this.die(browserStopped());
    // Whatever is left of it (renderers of a killed browser) goes too.
    this.kill();
    if (unexpected) {
      this.opts.logger?.error({ generation: this.id, pid: this.pid }, "browser disconnected; relaunching");
      this.opts.onDeath(this);
    }
  }

  private die(failure: RenderFailure): void {
    this.state = "dead";
    for (const slot of this.slots.values()) slot.markBroken(failure);
    this.waiters.rejectAll(new GenerationGone());
    this.idle.length = 0;
    this.fresh.length = 0;
  }

  /**
   * A page's renderer crashed or its target closed (window.close()) without the
   * engine asking. The slot is never used again (an idle one is replaced at
   * once), and the job on it fails with the verdict of `judgeLoss`.
   */
  private pageGone(slot: Slot | undefined, loss: PageLoss): void {
    if (!slot || slot.gone || slot.disposing || this.state === "dead") return;
    const at = performance.now();
    this.losses = [...this.losses.filter((t) => at - t <= 2 * LOSS_VERDICT_MS), at];
    slot.lose(this.judgeLoss(loss, at));
    for (const free of [this.idle, this.fresh]) {
      const i = free.indexOf(slot);
      if (i === -1) continue;
      free.splice(i, 1);
      this.discard(slot);
      this.topUp();
    }
  }

  /**
   * Whose fault a lost page is, from what the browser does next. If it stops,
   * or no longer answers, it died under the job: ours (`crashed`). If another
   * page went within the same moment, the cause cannot be told (`page_lost`,
   * retryable). Otherwise only the job's own page went while the browser stayed
   * up and answering: the document's doing (`renderer_crashed`, `window_closed`).
   */
  private async judgeLoss(loss: PageLoss, at: number): Promise<RenderFailure> {
    await new Promise((resolve) => setTimeout(resolve, LOSS_VERDICT_MS));
    const answers = await withTimeout(this.session.send("Browser.getVersion"), ANSWER_MS, "browser check").then(
      () => true,
      () => false,
    );
    if (this.state === "dead" || !answers) return browserStopped();
    if (this.losses.some((t) => t !== at && Math.abs(t - at) <= LOSS_VERDICT_MS)) return pagesLost();
    return loss === "crashed" ? rendererCrashed() : windowClosed();
  }

  private slotOfTarget(targetId: string): Slot | undefined {
    for (const slot of this.slots.values()) if (slot.targetId === targetId) return slot;
    return undefined;
  }

  /** Popups (window.open, target=_blank) get closed as soon as they exist. */
  private onTargetCreated(info: Protocol.Target.TargetInfo): void {
    if (info.type !== "page" || !info.browserContextId) return;
    const owner = this.slots.get(info.browserContextId);
    if (owner && owner.targetId !== info.targetId) {
      void this.session.send("Target.closeTarget", { targetId: info.targetId }).catch(noop);
    }
  }

  /** A window is free (reset for its key, or fresh): it goes to the first job waiting that may take it. */
  private makeIdle(slot: Slot): void {
    if (this.state !== "live") return;
    (slot.owner === undefined ? this.fresh : this.idle).push(slot);
    this.waiters.serveEach((key) => this.takeFree(key));
    this.topUp();
  }

  /** Disposes a window's context; a browser that does not confirm it in time is killed. */
  private discard(slot: Slot): void {
    this.slots.delete(slot.contextId);
    void slot.destroy().then((disposed) => {
      if (this.state !== "live" || disposed) return;
      this.opts.logger?.error({ generation: this.id }, "browser did not dispose a context in time; killing it");
      this.kill();
    });
  }

  /** Opens one fresh window. During launch a failure fails the launch; later it is retried, then the browser is relaunched. */
  private async openSlot(launching: boolean): Promise<void> {
    this.preparingCount++;
    this.opening++;
    this.opened++;
    let slot: Slot | undefined;
    try {
      slot = await Slot.open({ ...this.opts.slot, browser: this.session, onGone: (s, loss) => this.pageGone(s, loss) });
      // Register first so a popup or crash during the warm-up is attributed to this page.
      this.slots.set(slot.contextId, slot);
      this.opening--;
      this.warming++;
      try {
        await slot.warmUp();
      } catch (err) {
        this.slots.delete(slot.contextId);
        void slot.destroy();
        throw err;
      } finally {
        this.warming--;
      }
      if (this.state !== "live") {
        void slot.destroy();
        return;
      }
      this.openFailures = 0;
      this.makeIdle(slot);
    } catch (err) {
      if (!slot) this.opening--;
      if (launching) throw err;
      if (this.state !== "live") return;
      this.openFailures++;
      this.opts.logger?.warn({ err, generation: this.id, failures: this.openFailures }, "could not open a page");
      if (this.openFailures >= OPEN_FAILURES_BEFORE_RELAUNCH) {
        this.kill();
        return;
      }
      setTimeout(() => this.topUp(), 100 * this.openFailures).unref();
    } finally {
      this.preparingCount--;
    }
  }

  /** Renders started on this browser (for recycling). */
  countRender(): number {
    return ++this.renders;
  }
}

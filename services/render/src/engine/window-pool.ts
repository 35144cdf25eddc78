import { noop } from "./async";
import { WaiterQueue } from "./fifo";
import type { RenderFailure, EngineLogger } from "./types";

/** The pool hands out no more windows (its browser died or is being recycled): take one from the next. */
export class PoolClosed extends Error {}

/** A window (a browser context with its page, the engine's Slot) as the pool keeps it. */
export interface PoolWindow {
  readonly contextId: string;
  /** The key whose jobs it serves, from its first job on; never another's. */
  owner: string | undefined;
  /** Whether it can be reset and used again (rather than thrown away). */
  readonly reusable: boolean;
  /** Its first print, off any job's clock; then reset. */
  warmUp(): Promise<void>;
  /** Leaves nothing of the last job behind. */
  wipe(): Promise<void>;
  /** Throws it away; false when the browser did not confirm in time. */
  destroy(): Promise<boolean>;
  /** Its job fails with `failure`; it is never used again. */
  markBroken(failure: RenderFailure): void;
}

export interface WindowPoolOptions<W extends PoolWindow> {
  /** Opens one fresh window (not yet warm). */
  open(): Promise<W>;
  /** Fresh windows kept warm for keys without a free window of their own. */
  spares: number;
  /** The most windows kept (busy, free, being opened or reset). */
  maxWindows: number;
  logger?: EngineLogger;
  /** What the pool's log lines say about whose windows they are (e.g. the browser's generation). */
  logFields?: object;
  /** The browser does not do what the pool asks (a context it does not dispose in time, windows it cannot open): it should go. */
  onBrowserStuck(): void;
  /** Draining, the last busy window came back. */
  onDrained(): void;
}

const OPEN_FAILURES_BEFORE_GIVING_UP = 5;

/**
 * The windows of one browser, each serving one API key's jobs. A fresh window
 * (warm: it has printed the engine's warm-up document, and no job has run in
 * it) is bound to the key of the first job it takes; after each job it is
 * reset and kept for that key's next one, or thrown away if it is not fit to
 * be reused. `spares` fresh windows are kept warm, one more for each job
 * waiting whose key has no window coming back; when a fresh window is needed
 * and `maxWindows` are held, the key window idle the longest is disposed.
 * Jobs wait in arrival order for a window they may take.
 */
export class WindowPool<W extends PoolWindow> {
  private state: "open" | "draining" | "closed" = "open";
  /** Windows opened since the pool started. */
  opened = 0;
  private busy = 0;
  /** Windows being reset or opened: work done between jobs. */
  private preparingCount = 0;
  /** Windows being opened, then warmed up (registered in `held` by then). */
  private opening = 0;
  private warming = 0;
  private openFailures = 0;
  /** Every window held, by browser context. */
  private readonly held = new Map<string, W>();
  /** Reset windows bound to a key, free; the one idle the longest first. */
  private readonly idle: W[] = [];
  /** Warm windows no job has run in, free for any key. */
  private readonly fresh: W[] = [];
  /** Jobs waiting for a window, by key. */
  private readonly waiters = new WaiterQueue<W, string>();

  constructor(private readonly opts: WindowPoolOptions<W>) {}

  /** Opens `count` fresh windows; resolves once all are warm, rejects if one cannot be opened. */
  async start(count: number): Promise<void> {
    await Promise.all(Array.from({ length: count }, () => this.openWindow(true)));
  }

  /** Windows held, busy, free or being opened. */
  get size(): number {
    return this.held.size + this.opening;
  }

  /** Free windows: keys' own, reset, and fresh ones. */
  get free(): number {
    return this.state === "open" ? this.idle.length + this.fresh.length : 0;
  }

  /** Free fresh windows, bound to no key yet. */
  get freshCount(): number {
    return this.state === "open" ? this.fresh.length : 0;
  }

  get preparing(): number {
    return this.state === "open" ? this.preparingCount : 0;
  }

  /** The window of a browser context, if the pool holds it. */
  byContext(contextId: string): W | undefined {
    return this.held.get(contextId);
  }

  /** The first window held that `matches`. */
  find(matches: (window: W) => boolean): W | undefined {
    for (const window of this.held.values()) if (matches(window)) return window;
    return undefined;
  }

  /**
   * A warm window for one job of `key`: one of the key's own, reset, or else a fresh one,
   * which is bound to the key from now on. Waits (first come, first served among jobs that
   * could take the same window) for a reset or a fresh window to be ready.
   */
  take(key: string, signal?: AbortSignal): Promise<W> {
    if (this.state !== "open") return Promise.reject(new PoolClosed());
    const window = this.takeFree(key);
    if (window) {
      this.topUp();
      return Promise.resolve(window);
    }
    const waiting = this.waiters.wait(signal, key);
    this.topUp();
    return waiting;
  }

  /** Gives a window back after its job: reset and kept for its key, or thrown away. */
  release(window: W): void {
    this.busy--;
    if (this.state === "closed") return;
    if (this.state === "draining") {
      this.held.delete(window.contextId);
      if (this.busy === 0) this.opts.onDrained();
      return;
    }
    if (!window.reusable) {
      this.discard(window);
      this.topUp();
      return;
    }
    this.preparingCount++;
    window.wipe().then(
      () => {
        this.preparingCount--;
        this.makeFree(window);
      },
      (err: unknown) => {
        this.preparingCount--;
        if (this.state !== "open") return;
        this.opts.logger?.warn({ err, ...this.opts.logFields }, "page wipe failed; replacing the page");
        this.discard(window);
        this.topUp();
      },
    );
  }

  /** A window the browser lost: a free one is replaced at once, a busy one when its job gives it back. */
  lost(window: W): void {
    for (const free of [this.idle, this.fresh]) {
      const i = free.indexOf(window);
      if (i === -1) continue;
      free.splice(i, 1);
      this.discard(window);
      this.topUp();
    }
  }

  /** Stops handing out windows; onDrained once the busy ones are back (at once if none is busy). */
  drain(): void {
    if (this.state !== "open") return;
    this.state = "draining";
    this.waiters.rejectAll(new PoolClosed());
    this.idle.length = 0;
    this.fresh.length = 0;
    if (this.busy === 0) this.opts.onDrained();
  }

  /** The browser is gone: every window's job fails with `failure`, and no window is handed out again. */
  close(failure: RenderFailure): void {
    this.state = "closed";
    for (const window of this.held.values()) window.markBroken(failure);
    this.waiters.rejectAll(new PoolClosed());
    this.idle.length = 0;
    this.fresh.length = 0;
  }

  /** The key's own free window (the most recently used), or a fresh one bound to it; counted busy. */
  private takeFree(key: string): W | undefined {
    const own = this.idle.findLastIndex((window) => window.owner === key);
    const window = own === -1 ? this.fresh.shift() : this.idle.splice(own, 1)[0];
    if (!window) return undefined;
    window.owner = key;
    this.busy++;
    return window;
  }

  /**
   * Keeps `spares` fresh windows ready, and one more for each job waiting whose key has no
   * window of its own coming back (busy or being reset), opening them while fewer than
   * `maxWindows` are held and disposing the key window idle the longest otherwise.
   */
  private topUp(): void {
    if (this.state !== "open") return;
    const free = new Set([...this.idle, ...this.fresh]);
    const returning = new Set([...this.held.values()].filter((window) => !free.has(window) && window.reusable).map((window) => window.owner));
    const unserved = this.waiters.tags.filter((key) => !returning.has(key)).length;
    let short = this.opts.spares + unserved - this.fresh.length - this.opening - this.warming;
    for (; short > 0; short--) {
      if (this.size >= this.opts.maxWindows) {
        const oldest = this.idle.shift();
        if (!oldest) return;
        this.discard(oldest);
      }
      void this.openWindow(false).catch(noop);
    }
  }

  /** A window is free (reset for its key, or fresh): it goes to the first job waiting that may take it. */
  private makeFree(window: W): void {
    if (this.state !== "open") return;
    (window.owner === undefined ? this.fresh : this.idle).push(window);
    this.waiters.serveEach((key) => this.takeFree(key));
    this.topUp();
  }

  /** Disposes a window's context; a browser that does not confirm it in time is stuck. */
  private discard(window: W): void {
    this.held.delete(window.contextId);
    void window.destroy().then((disposed) => {
      if (this.state !== "open" || disposed) return;
      this.opts.logger?.error({ ...this.opts.logFields }, "browser did not dispose a context in time; killing it");
      this.opts.onBrowserStuck();
    });
  }

  /** Opens one fresh window. Starting, a failure fails the start; later it is retried, and the browser given up on after a few. */
  private async openWindow(starting: boolean): Promise<void> {
    this.preparingCount++;
    this.opening++;
    this.opened++;
    let window: W | undefined;
    try {
      window = await this.opts.open();
      // Held first, so that a popup or a crash during the warm-up is put down to this window.
      this.held.set(window.contextId, window);
      this.opening--;
      this.warming++;
      try {
        await window.warmUp();
      } catch (err) {
        this.held.delete(window.contextId);
        void window.destroy();
        throw err;
      } finally {
        this.warming--;
      }
      if (this.state !== "open") {
        void window.destroy();
        return;
      }
      this.openFailures = 0;
      this.makeFree(window);
    } catch (err) {
      if (!window) this.opening--;
      if (starting) throw err;
      if (this.state !== "open") return;
      this.openFailures++;
      this.opts.logger?.warn({ err, ...this.opts.logFields, failures: this.openFailures }, "could not open a page");
      if (this.openFailures >= OPEN_FAILURES_BEFORE_GIVING_UP) {
        this.opts.onBrowserStuck();
        return;
      }
      setTimeout(() => this.topUp(), 100 * this.openFailures).unref();
    } finally {
      this.preparingCount--;
    }
  }
}

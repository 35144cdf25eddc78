import type { Browser, CDPSession, Protocol } from "puppeteer-core";
import { openChromium, type LaunchSettings } from "./chromium";
import { noop, withTimeout } from "./async";
import { browserStopped, pagesLost, rendererCrashed, windowClosed } from "./job";
import type { SlotSettings } from "./options";
import { Slot, type PageLoss } from "./slot";
import { RenderFailure, type EngineLogger } from "./types";
import { PoolClosed, WindowPool } from "./window-pool";

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
/**
 * How long after a page is lost the browser is watched before the loss is
 * judged: a browser that dies or is killed takes its pages with it within
 * this time (or stops answering), and pages lost together fall in it.
 */
const LOSS_VERDICT_MS = 500;
/** The browser's answer to a round trip, when judging a lost page. */
const ANSWER_MS = 2_000;
/**
 * One Chromium process, its windows (a WindowPool: a window per key, reset
 * between its jobs) and the blame for a window lost while its document ran
 * (`judgeLoss`). Replaced as a whole when the browser dies or hangs, and
 * retired (after its in-flight jobs) when it is recycled. With a Chromium
 * started elsewhere (LaunchSettings.connectUrl), one connection to it and its
 * warm pages: closing or killing it drops the connection (which disposes its
 * contexts) and leaves the browser to whoever runs it.
 */
export class Generation {
  state: "live" | "retiring" | "dead" = "live";
  renders = 0;
  private closing = false;
  /** When pages were lost lately (performance.now()), to tell a page lost alone from pages lost together. */
  private losses: number[] = [];
  private closed: Promise<void> | undefined;
  private readonly pool: WindowPool<Slot>;

  private constructor(
    readonly id: number,
    private readonly browser: Browser,
    private readonly session: CDPSession,
    private readonly opts: GenerationOptions,
  ) {
    this.pool = new WindowPool<Slot>({
      open: () => Slot.open({ ...opts.slot, browser: session, onGone: (slot, loss) => this.pageGone(slot, loss) }),
      spares: opts.spares,
      maxWindows: opts.maxWindows,
      logger: opts.logger,
      logFields: { generation: id },
      onBrowserStuck: () => this.kill(),
      onDrained: () => void this.close(),
    });
  }

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
      gen.sandboxed = await sandboxedOf(session);
      await gen.pool.start(opts.pages);
      return gen;
    } catch (err) {
      if (generation) await generation.close();
      else if (opts.launch.connectUrl !== undefined) await browser.disconnect().catch(noop);
      else await browser.close().catch(() => browser.process()?.kill("SIGKILL"));
      throw err;
    }
  }

  /** Chromium runs with its own sandbox: its command line, as it reports it, has no --no-sandbox (undefined: it did not say). */
  sandboxed: boolean | undefined;

  /** Chromium runs elsewhere (its own container); this generation is a connection to it. */
  private get remote(): boolean {
    return this.opts.launch.connectUrl !== undefined;
  }

  get pid(): number | undefined {
    return this.browser.process()?.pid;
  }

  /** Windows held, busy, free or being opened. */
  get windows(): number {
    return this.pool.size;
  }

  /** Windows opened since launch. */
  get opened(): number {
    return this.pool.opened;
  }

  /** Free windows: a key's own, reset, and fresh ones. */
  get warmPages(): number {
    return this.state === "live" ? this.pool.free : 0;
  }

  get preparing(): number {
    return this.state === "live" ? this.pool.preparing : 0;
  }

  /** A warm window for one job of `key` (see WindowPool.take). */
  take(key: string, signal?: AbortSignal): Promise<Slot> {
    if (this.state !== "live") return Promise.reject(new PoolClosed());
    return this.pool.take(key, signal);
  }

  /** Gives a window back after its job: reset and kept for its key, or thrown away. */
  release(slot: Slot): void {
    this.pool.release(slot);
  }

  /** Stops handing out pages; closes the browser once the jobs in flight are done. */
  retire(): void {
    if (this.state !== "live") return;
    this.state = "retiring";
    this.pool.drain();
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
    this.pool.close(failure);
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
    this.pool.lost(slot);
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
    return loss === "crashed" ? rendererCrashed(this.opts.slot.processMemoryMiB) : windowClosed();
  }

  private slotOfTarget(targetId: string): Slot | undefined {
    return this.pool.find((slot) => slot.targetId === targetId);
  }

  /** Popups (window.open, target=_blank) get closed as soon as they exist. */
  private onTargetCreated(info: Protocol.Target.TargetInfo): void {
    if (info.type !== "page" || !info.browserContextId) return;
    const owner = this.pool.byContext(info.browserContextId);
    if (owner && owner.targetId !== info.targetId) {
      void this.session.send("Target.closeTarget", { targetId: info.targetId }).catch(noop);
    }
  }

  /** Renders started on this browser (for recycling). */
  countRender(): number {
    return ++this.renders;
  }
}

/** Whether the browser runs sandboxed, from the command line it reports (Browser.getBrowserCommandLine), or undefined. */
async function sandboxedOf(session: CDPSession): Promise<boolean | undefined> {
  try {
    const { arguments: args } = await session.send("Browser.getBrowserCommandLine");
    return !args.includes("--no-sandbox");
  } catch {
    return undefined;
  }
}

import {
  RenderFailure,
  Slot,
  WaiterQueue,
  deadlineOf,
  engineSettings,
  layoutOf,
  openChromium,
  type RenderJob,
  type RenderOutput,
  type SlotDeps,
} from "@pressroom/render/engine";
import type { Browser } from "puppeteer-core";

/**
 * The other way to keep jobs apart, measured against the engine's wiped and
 * reused page: every render gets a brand-new browser context, thrown away after
 * it while its replacement opens in the background. Built from the engine's own
 * pieces (its Chromium, its page, its settings and page count), so that the two
 * differ in the isolation alone; nothing here relaunches, recycles or judges a
 * lost page.
 */
export class FreshContexts {
  private readonly idle: Slot[] = [];
  private readonly waiters = new WaiterQueue<Slot>();
  /** Contexts being thrown away or opened: work a burst leaves behind. */
  private preparing = 0;

  private constructor(
    private readonly browser: Browser,
    private readonly deps: SlotDeps,
    private readonly deadlineMs: number,
  ) {}

  static async start(executablePath: string, slots: number): Promise<FreshContexts> {
    const settings = engineSettings({ executablePath, slots });
    const browser = await openChromium(settings.launch);
    const session = await browser.target().createCDPSession();
    const onGone = (slot: Slot) => slot.markBroken(new RenderFailure("crashed", "the page went away"));
    const pool = new FreshContexts(browser, { ...settings.slot, browser: session, onGone }, settings.deadlineMs);
    // Warm at start, as the engine's pages are; a replacement is used once, so warming it would double its cost.
    await Promise.all(Array.from({ length: settings.pages }, () => pool.open(true)));
    return pool;
  }

  async render(job: RenderJob): Promise<RenderOutput> {
    const slot = this.idle.shift() ?? (await this.waiters.wait());
    try {
      return await slot.run(job.html, job.kind, layoutOf(job), deadlineOf(job, this.deadlineMs), { scriptErrors: job.scriptErrors });
    } finally {
      this.preparing++;
      void slot
        .destroy()
        .then(() => this.open(false))
        .finally(() => this.preparing--);
    }
  }

  /** As the engine's stats() reads them; the browser's pid is also its process group's. */
  stats(): { preparing: number; browserPid: number | undefined } {
    return { preparing: this.preparing, browserPid: this.browser.process()?.pid };
  }

  async close(): Promise<void> {
    await this.browser.close();
  }

  private async open(warm: boolean): Promise<void> {
    const slot = await Slot.open(this.deps);
    if (warm) await slot.warmUp();
    if (!this.waiters.serve(slot)) this.idle.push(slot);
  }
}

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, CDPSession } from "puppeteer-core";
import { openChromium } from "./chromium";
import { engineSettings } from "./options";
import { Slot } from "./slot";
import { RenderFailure } from "./types";
import { PoolClosed, WindowPool } from "./window-pool";

/**
 * The window pool on its own: real windows (browser contexts with their page,
 * the engine's Slot) of a real Chromium, handed out, reset and thrown away by
 * the pool's rules alone (no engine, no generation around it).
 */
describe("window pool: a window per key, reset between its jobs", () => {
  let browser: Browser;
  let session: CDPSession;
  const pools: WindowPool<Slot>[] = [];
  const stuck: string[] = [];

  before(async () => {
    const settings = engineSettings({ executablePath: process.env.CHROMIUM_PATH, slots: 1 });
    browser = await openChromium(settings.launch);
    session = await browser.target().createCDPSession();
  });
  after(async () => {
    for (const pool of pools) pool.close(new RenderFailure("crashed", "the test is over"));
    await browser?.close();
  });

  /** A pool of windows on the test's browser, started with `spares` fresh ones. */
  async function poolOf(spares: number, maxWindows: number, onDrained: () => void = () => undefined): Promise<WindowPool<Slot>> {
    const settings = engineSettings({ slots: 1 });
    const pool = new WindowPool<Slot>({
      open: () => Slot.open({ ...settings.slot, browser: session, onGone: (slot) => slot.markBroken(new RenderFailure("crashed", "gone")) }),
      spares,
      maxWindows,
      onBrowserStuck: () => stuck.push("stuck"),
      onDrained,
    });
    pools.push(pool);
    await pool.start(spares);
    return pool;
  }

  /** Until nothing is being opened, warmed or reset. */
  async function settled(pool: WindowPool<Slot>): Promise<void> {
    for (let i = 0; i < 400 && pool.preparing > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(pool.preparing, 0, "the pool settled");
  }

  /** The browser contexts Chromium holds. */
  const contexts = async () => (await session.send("Target.getBrowserContexts")).browserContextIds;

  it("binds a fresh window to its first key, and gives that key the same window back once it is reset", async () => {
    const pool = await poolOf(1, 4);
    const first = await pool.take("key-a");
    assert.equal(first.owner, "key-a");
    pool.release(first);
    await settled(pool);
    const again = await pool.take("key-a");
    assert.equal(again.contextId, first.contextId, "the key's own window, reset");
    pool.release(again);
    await settled(pool);
  });

  it("never gives a key another key's window: it takes a fresh one, and a fresh one is opened to keep the spares", async () => {
    const pool = await poolOf(1, 4);
    const a = await pool.take("key-a");
    pool.release(a);
    await settled(pool);
    const b = await pool.take("key-b");
    assert.notEqual(b.contextId, a.contextId);
    assert.equal(b.owner, "key-b");
    await settled(pool);
    assert.equal(pool.freshCount, 1, "the spare was replaced");
    assert.equal(pool.size, 3, "key-a's window, key-b's and a fresh one");
    pool.release(b);
    await settled(pool);
  });

  it("at its most windows, disposes the key window idle the longest to open a fresh one", async () => {
    const pool = await poolOf(1, 3);
    const a = await pool.take("key-a");
    pool.release(a);
    await settled(pool);
    const b = await pool.take("key-b");
    pool.release(b);
    await settled(pool);
    assert.equal(pool.size, 3);
    const c = await pool.take("key-c");
    await settled(pool);
    assert.equal(pool.size, 3, "never more than maxWindows");
    assert.equal(pool.byContext(a.contextId), undefined, "key-a's window went: idle the longest");
    assert.ok(!(await contexts()).includes(a.contextId), "and Chromium disposed its context");
    assert.equal(pool.byContext(b.contextId), b, "key-b's stays");
    const a2 = await pool.take("key-a");
    assert.notEqual(a2.contextId, a.contextId, "key-a starts again in a fresh window");
    pool.release(a2);
    pool.release(c);
    await settled(pool);
  });

  it("throws away a window not fit to be reused after its job, and opens another", async () => {
    const pool = await poolOf(1, 4);
    const a = await pool.take("key-a");
    a.markBroken(new RenderFailure("deadline", "a hung script"));
    pool.release(a);
    await settled(pool);
    assert.equal(pool.byContext(a.contextId), undefined);
    assert.ok(!(await contexts()).includes(a.contextId));
    const next = await pool.take("key-a");
    assert.notEqual(next.contextId, a.contextId);
    pool.release(next);
    await settled(pool);
  });

  it("makes a job wait, first come first served, for a window it may take; a waiting job can give up", async () => {
    const pool = await poolOf(1, 1);
    const a = await pool.take("key-a");
    const served: string[] = [];
    const abandoned = new AbortController();
    const b = pool.take("key-b", abandoned.signal);
    const a2 = pool.take("key-a").then((window) => (served.push("key-a"), window));
    abandoned.abort(new Error("the job went"));
    await assert.rejects(b, /the job went/);
    pool.release(a);
    const again = await a2;
    assert.equal(again.contextId, a.contextId, "key-a's second job got its own window back");
    assert.deepEqual(served, ["key-a"]);
    pool.release(again);
    await settled(pool);
  });

  it("draining, hands out nothing more and says when the last busy window is back; closed, fails the busy window's job", async () => {
    let drained = false;
    const pool = await poolOf(1, 4, () => (drained = true));
    const a = await pool.take("key-a");
    const waiting = pool.take("key-b");
    const b = await waiting;
    pool.drain();
    await assert.rejects(pool.take("key-c"), PoolClosed);
    pool.release(a);
    assert.equal(drained, false, "key-b's window is still busy");
    pool.release(b);
    assert.equal(drained, true);
    const closing = await poolOf(1, 4);
    const busy = await closing.take("key-a");
    closing.close(new RenderFailure("crashed", "the browser stopped"));
    assert.equal(busy.reusable, false);
    await assert.rejects(closing.take("key-a"), PoolClosed);
    assert.deepEqual(stuck, [], "the browser did everything the pools asked");
  });
});

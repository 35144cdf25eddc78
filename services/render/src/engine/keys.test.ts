import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { RenderEngine, RenderFailure, type SubresourceFetcher } from "./index";
import { browserProcesses, pdfText, startEngine } from "../test-support/engine";

/**
 * Every job runs this document: it reports what it finds of an earlier job's state, then leaves
 * all of it behind (a cookie, both storages, IndexedDB, a Cache Storage entry, a service worker if
 * one can be registered, window.name, a history entry, a global and a timer that keeps writing).
 * The image keeps the load event (and so the print) waiting until the async reads and writes are done.
 */
const PROBE = `<p id="out"></p><img src="https://keys.test/hold.svg"><script>
(async () => {
  const found = [];
  if (document.cookie) found.push("cookie");
  if (localStorage.length) found.push("localStorage");
  if (sessionStorage.length) found.push("sessionStorage");
  if ((await indexedDB.databases()).length) found.push("indexedDB");
  if ((await caches.keys()).length) found.push("cache");
  if ((await navigator.serviceWorker.getRegistrations()).length) found.push("serviceWorker");
  if (window.name) found.push("name");
  if (history.length > 1) found.push("history");
  if (typeof leakedGlobal !== "undefined") found.push("global");

  document.cookie = "k=leak; path=/; Secure";
  localStorage.setItem("k", "leak");
  sessionStorage.setItem("k", "leak");
  window.name = "leak";
  history.pushState({}, "", "/pushed");
  window.leakedGlobal = 1;
  setInterval(() => localStorage.setItem("late", "leak"), 5);
  await new Promise((resolve) => { const q = indexedDB.open("leakdb", 1); q.onsuccess = () => { q.result.close(); resolve(); }; q.onerror = resolve; });
  await (await caches.open("leak")).put("/cached", new Response("leak"));
  const sw = await navigator.serviceWorker.register("/sw.js").then(() => "registered", () => "refused");
  const wrote = [
    document.cookie ? "cookie" : "", localStorage.length ? "localStorage" : "", (await indexedDB.databases()).length ? "indexedDB" : "",
    (await caches.keys()).length ? "cache" : "", "serviceWorker " + sw, typeof leakedGlobal !== "undefined" ? "global" : "",
  ];
  document.getElementById("out").textContent = "found=[" + found.join(",") + "] wrote=[" + wrote.join(",") + "]";
})();
</script>`;

const WROTE = "wrote=[cookie,localStorage,indexedDB,cache,serviceWorker refused,global]";

const holdingFetcher: SubresourceFetcher = async () => {
  await new Promise((resolve) => setTimeout(resolve, 400));
  return { status: 200, headers: { "content-type": "image/svg+xml" }, body: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>') };
};

async function probe(engine: RenderEngine, keyId: string): Promise<string> {
  const text = pdfText((await engine.render({ kind: "pdf", html: PROBE, keyId })).data);
  assert.ok(text.includes(WROTE), `the job left its state behind (otherwise the test proves nothing): ${text}`);
  return text.match(/found=\[[^\]]*\]/)?.[0] ?? text;
}

describe("render engine: a window serves one key, reset between its jobs", () => {
  let engine: RenderEngine;
  before(async () => {
    // One slot, no spare and one window kept for a key: every window is reused or replaced, never idle in between.
    engine = await startEngine({ slots: 1, sparePages: 0, keyWindows: 1, fetchSubresource: holdingFetcher });
  });
  after(() => engine.close());

  it("gives the same key's next job the reset window, in which it finds nothing of the last job", async () => {
    const opened = engine.stats().windowsOpened;
    assert.equal(await probe(engine, "key-a"), "found=[]");
    assert.equal(await probe(engine, "key-a"), "found=[]");
    assert.equal(engine.stats().windowsOpened, opened, "key A's second job reused its window");
  });

  it("never gives another key's job that window: it gets a window of its own, and finds nothing either", async () => {
    const opened = engine.stats().windowsOpened;
    assert.equal(await probe(engine, "key-b"), "found=[]");
    assert.equal(engine.stats().windowsOpened, opened + 1, "key B's job got a fresh window");
    assert.equal(await probe(engine, "key-a"), "found=[]");
    assert.equal(engine.stats().windowsOpened, opened + 1, "key A's window was kept for it");
  });

  it("disposes the window idle the longest when a new key needs one and the browser holds its most", async () => {
    const opened = engine.stats().windowsOpened;
    assert.equal(engine.stats().windows, 2);
    assert.equal(await probe(engine, "key-c"), "found=[]");
    assert.equal(engine.stats().windows, 2);
    // B's window was idle the longest and went; A's is still there.
    assert.equal(await probe(engine, "key-a"), "found=[]");
    assert.equal(engine.stats().windowsOpened, opened + 1);
    assert.equal(await probe(engine, "key-b"), "found=[]");
    assert.equal(engine.stats().windowsOpened, opened + 2);
  });
});

describe("render engine: a window left in a bad state is never reused", () => {
  let engine: RenderEngine;
  before(async () => {
    engine = await startEngine({ slots: 1, sparePages: 0 });
  });
  after(() => engine.close());

  async function nextJobGetsAFreshWindow(): Promise<void> {
    const opened = engine.stats().windowsOpened;
    assert.match(pdfText((await engine.render({ kind: "pdf", html: "<p>next</p>", keyId: "key-a" })).data), /next/);
    assert.equal(engine.stats().windowsOpened, opened + 1, "the key's next job ran in a fresh window");
  }

  it("reuses the window after a job that succeeded", async () => {
    await engine.render({ kind: "pdf", html: "<p>fine</p>", keyId: "key-a" });
    const opened = engine.stats().windowsOpened;
    await engine.render({ kind: "pdf", html: "<p>fine again</p>", keyId: "key-a" });
    assert.equal(engine.stats().windowsOpened, opened);
  });

  it("after a dialog, even a dismissed one in a job that succeeded", async () => {
    assert.match(pdfText((await engine.render({ kind: "pdf", html: "<p>asked</p><script>confirm('sure?')</script>", keyId: "key-a" })).data), /asked/);
    await nextJobGetsAFreshWindow();
  });

  it("after a hung script", async () => {
    await assert.rejects(engine.render({ kind: "pdf", html: "<script>while (true) {}</script>", keyId: "key-a", deadlineMs: 1_000 }), (err: unknown) => {
      assert.ok(err instanceof RenderFailure && err.reason === "deadline", String(err));
      return true;
    });
    await nextJobGetsAFreshWindow();
  });

  it("after a crashed renderer", async () => {
    const busy = engine.render({
      kind: "pdf",
      html: "<script>const t = Date.now(); while (Date.now() - t < 5000) {}</script>",
      keyId: "key-a",
      deadlineMs: 20_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 700));
    for (const { pid } of browserProcesses(engine.stats().browserPid!).filter((p) => p.args.includes("--type=renderer"))) process.kill(pid, "SIGKILL");
    await assert.rejects(busy, (err: unknown) => {
      assert.ok(err instanceof RenderFailure && err.reason === "renderer_crashed", String(err));
      return true;
    });
    await nextJobGetsAFreshWindow();
  });

  it("after any other failure (an uncaught exception)", async () => {
    await assert.rejects(engine.render({ kind: "pdf", html: "<script>throw new Error('boom')</script>", keyId: "key-a" }), (err: unknown) => {
      assert.ok(err instanceof RenderFailure && err.reason === "script_error", String(err));
      return true;
    });
    await nextJobGetsAFreshWindow();
  });
});

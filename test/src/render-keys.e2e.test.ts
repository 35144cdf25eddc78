import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { descendantsOf } from "@pressroom/stack";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { listen } from "./test-support/hostile";
import { pdfText } from "./test-support/pdf";

/**
 * Issue 34: a window (browser context, page, renderer) serves one API key only. Through the whole
 * service (RENDER_SLOTS=1): every job leaves a cookie, both storages, IndexedDB, a Cache Storage
 * entry, a service worker if it can, window.name, a history entry and a global; the same key's
 * next job and another key's job find none of it, and three keys' jobs run in windows of their own.
 */
describe("windows per API key, through POST /v1/render", () => {
  let h: Harness;
  let hold: Awaited<ReturnType<typeof listen<http.Server>>>;
  const keys: string[] = [];

  before(async () => {
    // The image keeps the load event (and so the print) waiting while the document's async reads and writes run.
    hold = await listen(
      http.createServer((_req, res) => {
        setTimeout(() => res.writeHead(200, { "content-type": "image/svg+xml" }).end('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'), 400);
      }),
    );
    h = await startHarness({
      env: { RENDER_SLOTS: "1" },
      serviceEnv: { render: { RENDER_ALLOW_LOOPBACK: "true", RENDER_SUBRESOURCE_PORTS: `80,443,${hold.port}` } },
    });
    for (let i = 0; i < 3; i++) keys.push((await h.admin.createKey("business")).apiKey);
  });
  after(async () => {
    await h?.stop();
    await hold?.close();
  });

  const probe = () => `<p id="out"></p><img src="http://127.0.0.1:${hold.port}/hold.svg"><script>
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
  await new Promise((resolve) => { const q = indexedDB.open("leakdb", 1); q.onsuccess = () => { q.result.close(); resolve(); }; q.onerror = resolve; });
  await (await caches.open("leak")).put("/cached", new Response("leak"));
  await navigator.serviceWorker.register("/sw.js").catch(() => undefined);
  const wrote = (await indexedDB.databases()).length && (await caches.keys()).length && localStorage.length && document.cookie ? "all" : "not all";
  document.getElementById("out").textContent = "found=[" + found.join(",") + "] wrote=" + wrote;
})();
</script>`;

  async function render(key: string): Promise<string> {
    const response = await h.api.post("/v1/render", { html: probe(), data: {} }, { key });
    assert.equal(response.status, 200, JSON.stringify(response.json));
    const text = pdfText((await h.api.download((response.json as { url: string }).url)).body);
    assert.match(text, /wrote=all/, "the job left its state behind (otherwise the test proves nothing)");
    // Let the window's reset finish before the next job, so that a window of the key is free for it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    return text.match(/found=\[[^\]]*\]/)?.[0] ?? text;
  }

  /** Chromium renderer processes under the render worker: one per window it keeps. */
  function renderers(): number {
    const worker = h.stack.services.processes.get("render")!.child.pid!;
    return descendantsOf(worker).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--type=renderer");
      } catch {
        return false;
      }
    }).length;
  }

  it("the same key's next job finds nothing of the last one", async () => {
    assert.equal(await render(keys[0]!), "found=[]");
    assert.equal(await render(keys[0]!), "found=[]");
  });

  it("another key's job finds nothing either, in a window of its own", async () => {
    const before = renderers();
    assert.equal(await render(keys[1]!), "found=[]");
    assert.equal(await render(keys[2]!), "found=[]");
    assert.equal(await render(keys[0]!), "found=[]");
    // One slot and one fresh window kept warm: each new key took the fresh window and another was
    // opened in its place, so the renderers grew by one per key. Keys sharing windows would not.
    assert.ok(renderers() >= before + 2, `${renderers()} renderers after two new keys, ${before} before`);
  });

  endOfSuiteChecks(() => h);
});

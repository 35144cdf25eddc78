import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { RenderOptions } from "@pressroom/domain";
import { RenderEngine, RenderFailure, type SubresourceFetcher } from "./index";
import { browserProcesses, failsWith, pdfInfo, pdfOutline, pdfText, pngSize, startEngine, testLogger } from "../test-support/engine";

const A4_LANDSCAPE: RenderOptions = {
  format: "A4",
  landscape: true,
  margin: { top: "10mm", right: "10mm", bottom: "10mm", left: "10mm" },
  headerHtml: "",
  footerHtml: "",
};

describe("render engine: output", () => {
  let engine: RenderEngine;
  before(async () => {
    engine = await startEngine({ slots: 2 });
  });
  after(() => engine.close());

  it("renders a PDF whose text is the document's", async () => {
    const out = await engine.render({ html: "<h1>Hello Ada</h1>", kind: "pdf" });
    assert.equal(out.contentType, "application/pdf");
    assert.equal(out.pages, 1);
    assert.match(pdfText(out.data), /Hello Ada/);
  });

  it("honours page settings: A4 landscape", async () => {
    const out = await engine.render({ html: "<p>wide</p>", kind: "pdf", options: A4_LANDSCAPE });
    const info = pdfInfo(out.data);
    assert.ok(Math.abs(info.widthPt - 841.9) < 2 && Math.abs(info.heightPt - 595.3) < 2, `${info.widthPt} x ${info.heightPt}`);
  });

  it("prints header and footer templates with page numbers", async () => {
    const footer = `<div style="font-size:10px;width:100%;text-align:center">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>`;
    const out = await engine.render({
      html: `<div style="break-after:page">first</div><div>second</div>`,
      kind: "pdf",
      options: { ...A4_LANDSCAPE, landscape: false, margin: { ...A4_LANDSCAPE.margin, top: "20mm", bottom: "20mm" }, footerHtml: footer },
    });
    assert.equal(out.pages, 2);
    const text = pdfText(out.data);
    assert.match(text, /Page 1 of 2/);
    assert.match(text, /Page 2 of 2/);
  });

  it("prints bookmarks from the document's headings, nested by level, only when asked (outline)", async () => {
    const html = `<h1>Chapter one</h1><h2>Section 1.1</h2><h2>Section 1.2</h2><h1 style="break-before:page">Chapter two</h1>`;
    const out = await engine.render({ html, kind: "pdf", options: { outline: true } });
    assert.deepEqual(pdfOutline(out.data), [
      {
        title: "Chapter one",
        kids: [
          { title: "Section 1.1", kids: [] },
          { title: "Section 1.2", kids: [] },
        ],
      },
      { title: "Chapter two", kids: [] },
    ]);
    assert.deepEqual(pdfOutline((await engine.render({ html, kind: "pdf" })).data), []);
  });

  it("honours CSS @page size for raw HTML", async () => {
    const out = await engine.render({ html: "<style>@page { size: A5 }</style><p>small</p>", kind: "pdf" });
    const info = pdfInfo(out.data);
    assert.ok(Math.abs(info.widthPt - 419.5) < 2 && Math.abs(info.heightPt - 595.3) < 2, `${info.widthPt} x ${info.heightPt}`);
  });

  it("renders a PNG of exactly the requested size", async () => {
    const out = await engine.render({
      html: "<body style='background:#246'><h1>Card</h1></body>",
      kind: "png",
      options: { imageWidth: 1200, imageHeight: 630 },
    });
    assert.equal(out.contentType, "image/png");
    assert.deepEqual(pngSize(out.data), { width: 1200, height: 630 });
  });

  it("applies deviceScaleFactor to the PNG", async () => {
    const out = await engine.render({ html: "<h1>Card</h1>", kind: "png", options: { imageWidth: 1200, imageHeight: 630, deviceScaleFactor: 2 } });
    assert.deepEqual(pngSize(out.data), { width: 2400, height: 1260 });
  });

  it("renders 8 jobs at once on 4 slots", async () => {
    const four = await startEngine({ slots: 4 });
    try {
      const outs = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          i % 2
            ? four.render({ html: `<h1>job ${i}</h1>`, kind: "pdf" })
            : four.render({ html: `<h1>job ${i}</h1>`, kind: "png", options: { imageWidth: 400, imageHeight: 200 } }),
        ),
      );
      outs.forEach((out, i) => {
        if (i % 2) assert.match(pdfText(out.data), new RegExp(`job ${i}`));
        else assert.deepEqual(pngSize(out.data), { width: 400, height: 200 });
      });
      assert.equal(four.stats().renders, 8);
    } finally {
      await four.close();
    }
  });

  it("runs one renderer per warm page and none for browser UI", async () => {
    const renderers = browserProcesses(engine.stats().browserPid!).filter((p) => p.args.includes("--type=renderer"));
    const webUi = renderers.filter((p) => p.args.includes("--top-chrome-webui"));
    assert.deepEqual(
      webUi.map((p) => p.pid),
      [],
      "no renderer for Chromium's own UI (omnibox popups): each cost ~0.5 s of CPU after start",
    );
    // One per window (two slots, one spare, and the windows kept for the key); no tab of Chromium's own.
    assert.ok(renderers.length <= engine.stats().windows, `${renderers.length} renderers for ${engine.stats().windows} windows`);
  });

  it("refuses an impossible job before queueing it", async () => {
    await assert.rejects(engine.render({ html: "<p>x</p>", kind: "png" }), failsWith("invalid_document"));
  });
});

describe("render engine: isolation between jobs on one page", () => {
  let engine: RenderEngine;
  const calls: string[] = [];
  const WRITE_JS = `
    document.cookie = "site=leak; domain=pressroom.invalid; path=/; Secure; SameSite=None";
    document.cookie = "host=leak; path=/; Secure";
    localStorage.setItem("k", "leak"); sessionStorage.setItem("k", "leak"); window.name = "leak";
    window.dbReady = new Promise((resolve) => { const q = indexedDB.open("leakdb", 1); q.onsuccess = () => { q.result.close(); resolve(); }; q.onerror = resolve; });
    history.pushState({}, "", "/pushed");
    document.title = "written";`;
  // The image keeps the load event (and so the print) waiting until the async reads are done.
  const READ_JS = `
    const hold = new Image(); hold.src = "https://isolation.test/hold.svg"; document.body.append(hold);
    (async () => {
      await window.dbReady;
      const dbs = (await indexedDB.databases()).map((d) => d.name).join(",");
      const caches_ = await caches.keys().catch((e) => "error");
      document.getElementById("out").textContent =
        "cookie=[" + document.cookie + "] local=" + localStorage.length + " session=" + sessionStorage.length +
        " idb=[" + dbs + "] caches=[" + caches_ + "] name=[" + window.name + "] history=" + history.length;
      document.title = "read";
    })();`;
  // What a cross-site frame finds, then whether it can store anything.
  const FRAME = `<!doctype html><p id="out">frame</p><script>
    let had = "", wrote = "";
    try { had = localStorage.getItem("f") ?? ""; } catch (e) { had = "blocked"; }
    try { localStorage.setItem("f", "leak"); wrote = "stored"; } catch (e) { wrote = "blocked"; }
    document.getElementById("out").textContent = "frame had=[" + had + "] " + wrote + " cookie=[" + document.cookie + "]";
  </script>`;
  const fetcher: SubresourceFetcher = async ({ url }) => {
    calls.push(url.href);
    const js = (body: string, headers: Record<string, string> = {}) => ({
      status: 200,
      headers: { "content-type": "text/javascript", ...headers },
      body: Buffer.from(body),
    });
    if (url.pathname === "/write.js") return js(WRITE_JS, { "set-cookie": "fromheader=leak; Path=/; Secure; SameSite=None" });
    if (url.pathname === "/read.js") return js(READ_JS);
    if (url.pathname === "/hold.svg") await new Promise((resolve) => setTimeout(resolve, 300));
    if (url.pathname === "/pixel.svg" || url.pathname === "/hold.svg") {
      return {
        status: 200,
        headers: { "content-type": "image/svg+xml", "cache-control": "max-age=86400" } as Record<string, string>,
        body: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'),
      };
    }
    // Only the first job's frame is sent a cookie.
    const frameHeaders: Record<string, string> = {
      "content-type": "text/html",
      ...(url.search === "?first" ? { "set-cookie": "frame=leak; Path=/; Secure; SameSite=None" } : {}),
    };
    return { status: 200, headers: frameHeaders, body: Buffer.from(FRAME) };
  };

  before(async () => {
    // One slot and no spare page: the second job is guaranteed to reuse the first one's page.
    engine = await startEngine({ slots: 1, sparePages: 0, fetchSubresource: fetcher });
  });
  after(() => engine.close());

  it("leaves no cookies, storage, window.name or history for the next job", async () => {
    const first = await engine.render({
      kind: "pdf",
      html: `<p id="out"></p><script src="https://isolation.test/write.js"></script><script src="https://isolation.test/read.js"></script>
        <iframe src="https://isolation.test/?first" style="width:600px;height:80px"></iframe><img src="https://isolation.test/pixel.svg">`,
    });
    const wrote = pdfText(first.data);
    // The writes did happen in the first job (otherwise the test proves nothing).
    assert.match(wrote, /cookie=\[[^\]]*site=leak/);
    assert.match(wrote, /local=1 session=1 idb=\[leakdb\]/);
    assert.match(wrote, /name=\[leak\]/);
    // The headless shell lets a cross-site frame store (the full browser refuses third-party cookies and storage).
    assert.match(wrote, /frame had=\[\] (stored cookie=\[[^\]]*frame=leak\]|blocked cookie=\[\])/);

    const second = await engine.render({
      kind: "pdf",
      html: `<p id="out"></p><script src="https://isolation.test/read.js"></script>
        <iframe src="https://isolation.test/" style="width:600px;height:80px"></iframe><img src="https://isolation.test/pixel.svg">`,
    });
    const read = pdfText(second.data);
    assert.match(read, /cookie=\[\] local=0 session=0 idb=\[\] caches=\[\] name=\[\] history=1/);
    // Nor does a cross-site frame find what it stored in the previous job.
    assert.match(read, /frame had=\[\] (stored|blocked) cookie=\[\]/);
    // Nothing was served from a cache: the fetcher saw the pixel once per job.
    assert.equal(calls.filter((u) => u.endsWith("/pixel.svg")).length, 2);
  });
});

describe("render engine: limits", () => {
  let engine: RenderEngine;
  const logger = testLogger();
  before(async () => {
    engine = await startEngine({ slots: 1, maxPages: 20, logger });
  });
  after(() => engine.close());

  it("kills an infinite loop at the deadline, naming the job's whole deadline, and keeps serving", async () => {
    const job = { kind: "pdf", html: "<script>while(true){}</script>", deadlineMs: 1_800, jobDeadlineMs: 2_000 } as const;
    await assert.rejects(engine.render(job), (err: unknown) => {
      failsWith("deadline")(err);
      assert.match((err as Error).message, /2 s deadline/);
      return true;
    });
    assert.match(pdfText((await engine.render({ kind: "pdf", html: "<p>after the loop</p>" })).data), /after the loop/);
  });

  it("fails a 10,000-page document on the page cap", async () => {
    await assert.rejects(engine.render({ kind: "pdf", html: `<style>div{height:1100px}</style>${"<div>p</div>".repeat(10_000)}` }), failsWith("page_cap"));
    await assert.rejects(engine.render({ kind: "pdf", html: `<style>div{break-after:page}</style>${"<div>p</div>".repeat(10_000)}` }), (err: unknown) => {
      failsWith("page_cap")(err);
      assert.match((err as Error).message, /more than 20 pages/);
      return true;
    });
  });

  it("fails on the real page count when the estimate cannot tell", async () => {
    // 30 short pages by height: estimated at 15 (under the cap of 20), printed as 21, refused.
    await assert.rejects(
      engine.render({ kind: "pdf", html: `<style>body{margin:0}div{height:1000px}</style>${"<div>p</div>".repeat(30)}` }),
      failsWith("page_cap"),
    );
    const ok = await engine.render({ kind: "pdf", html: `<style>div{break-after:page}</style>${"<div>p</div>".repeat(20)}` });
    assert.equal(ok.pages, 20);
  });

  it("intersects a job's own page_ranges with the page cap: they never lift it", async () => {
    // 30 pages (estimated at 15, under the cap of 20): asking for pages within the cap, or past it, is refused all the same.
    const thirty = `<style>div{break-after:page}</style>${"<div>p</div>".repeat(30)}`;
    for (const pageRanges of ["25-30", "1-3", "1-1000", "21"]) {
      await assert.rejects(engine.render({ kind: "pdf", html: thirty, options: { pageRanges } }), failsWith("page_cap"), pageRanges);
    }
    const six = `<style>div{break-after:page}</style>${[1, 2, 3, 4, 5, 6].map((n) => `<div>page ${n}</div>`).join("")}`;
    const picked = await engine.render({ kind: "pdf", html: six, options: { pageRanges: "5,2-3,3-3,4-100" } });
    assert.equal(picked.pages, 5);
    assert.match(pdfText(picked.data), /page 2[\s\S]*page 6/);
    assert.doesNotMatch(pdfText(picked.data), /page 1/);
  });

  it("fails a memory bomb and keeps serving", async () => {
    await assert.rejects(
      engine.render({ kind: "pdf", html: "<script>let a=[];for(;;)a.push(new Array(1e6).fill(1))</script>", deadlineMs: 20_000 }),
      (err: unknown) => err instanceof RenderFailure && (err.reason === "renderer_crashed" || err.reason === "deadline"),
    );
    assert.match(pdfText((await engine.render({ kind: "pdf", html: "<p>after the bomb</p>" })).data), /after the bomb/);
  });

  it("fails on the output cap", async () => {
    const small = await startEngine({ slots: 1, sparePages: 0, maxOutputBytes: 2_000 });
    try {
      await assert.rejects(small.render({ kind: "pdf", html: "<h1>too big for 2 kB</h1>" }), (err: unknown) => {
        failsWith("output_cap")(err);
        assert.match((err as Error).message, /2000 bytes/);
        return true;
      });
      await assert.rejects(small.render({ kind: "png", html: "<h1>x</h1>", options: { imageWidth: 800, imageHeight: 600 } }), failsWith("output_cap"));
    } finally {
      await small.close();
    }
  });
});

describe("render engine: crashes and recycling", () => {
  it("fails the render in flight when the browser is killed, then relaunches", async () => {
    const logger = testLogger();
    const engine = await startEngine({ slots: 2, logger });
    try {
      const before = engine.stats();
      assert.ok(before.browserPid);
      const profile = browserProcesses(before.browserPid)
        .find((p) => p.pid === before.browserPid)!
        .args.find((a) => a.startsWith("--user-data-dir="))!
        .slice("--user-data-dir=".length);
      assert.ok(existsSync(profile), profile);
      assert.ok(path.basename(profile).startsWith(`pressroom-chromium-${process.pid}-`), "named after its owner, for sweepAbandonedProfiles");
      const busy = engine.render({ kind: "pdf", html: "<script>const t = Date.now(); while (Date.now() - t < 5000) {}</script>", deadlineMs: 20_000 });
      await new Promise((resolve) => setTimeout(resolve, 700));
      process.kill(before.browserPid, "SIGKILL");
      await assert.rejects(busy, failsWith("crashed"));

      const out = await engine.render({ kind: "pdf", html: "<p>after the crash</p>" });
      assert.match(pdfText(out.data), /after the crash/);
      const after = engine.stats();
      assert.ok(after.relaunches > before.relaunches);
      assert.notEqual(after.browserPid, before.browserPid);
      assert.ok(!existsSync(profile), "the dead browser's profile directory is removed");

      // Killed between renders: the next one (even sent at once) waits for the relaunch and succeeds.
      process.kill(after.browserPid!, "SIGKILL");
      assert.match(pdfText((await engine.render({ kind: "pdf", html: "<p>second crash</p>" })).data), /second crash/);
      assert.ok(engine.stats().relaunches > after.relaunches);
    } finally {
      await engine.close();
    }
  });

  it("recycles the browser without dropping jobs in flight", async () => {
    const engine = await startEngine({ slots: 2, recycleAfterRenders: 3 });
    try {
      const firstPid = engine.stats().browserPid;
      // Keep jobs flowing until the replacement browser has taken over, then check every job succeeded.
      const outs = [];
      for (let round = 0; round < 100 && engine.stats().relaunches === 0; round++) {
        outs.push(...(await Promise.all(Array.from({ length: 3 }, (_, i) => engine.render({ kind: "pdf", html: `<p>job ${round}-${i}</p>` })))));
      }
      outs.push(...(await Promise.all(Array.from({ length: 3 }, (_, i) => engine.render({ kind: "pdf", html: `<p>job last-${i}</p>` })))));
      for (const out of outs) assert.match(pdfText(out.data), /job \S+-\d/);
      assert.ok(engine.stats().relaunches >= 1);
      assert.notEqual(engine.stats().browserPid, firstPid);
    } finally {
      await engine.close();
    }
  });

  it("close() returns even while a renderer is stuck, failing what is in flight", async () => {
    const engine = await startEngine({ slots: 1 });
    const stuck = engine.render({ kind: "pdf", html: "<script>while(true){}</script>" }).catch((err: unknown) => err);
    const queued = engine.render({ kind: "pdf", html: "<p>queued</p>" }).catch((err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await engine.close();
    failsWith("crashed")(await stuck);
    failsWith("crashed")(await queued);
    await assert.rejects(engine.render({ kind: "pdf", html: "<p>late</p>" }), failsWith("crashed"));
  });

  it("keeps a held page from the next job until the caller lets it go", async () => {
    const engine = await startEngine({ slots: 1, sparePages: 0 });
    try {
      let letGo!: () => void;
      const holdPageUntil = new Promise<void>((resolve) => (letGo = resolve));
      assert.match(pdfText((await engine.render({ kind: "pdf", html: "<p>first</p>" }, { holdPageUntil })).data), /first/);
      let secondDone = false;
      const second = engine.render({ kind: "pdf", html: "<p>second</p>" }).finally(() => (secondDone = true));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.equal(secondDone, false, "the only page was handed to the next job while held");
      assert.equal(engine.stats().warmSlots, 0);
      letGo();
      assert.match(pdfText((await second).data), /second/);
    } finally {
      await engine.close();
    }
  });

  it("stops a render when the caller aborts", async () => {
    const engine = await startEngine({ slots: 1 });
    try {
      const controller = new AbortController();
      const pending = engine.render({ kind: "pdf", html: "<script>while(true){}</script>" }, { signal: controller.signal });
      setTimeout(() => controller.abort(new Error("caller gave up")), 300);
      await assert.rejects(pending, /caller gave up/);
      assert.match(pdfText((await engine.render({ kind: "pdf", html: "<p>after abort</p>" })).data), /after abort/);
    } finally {
      await engine.close();
    }
  });
});

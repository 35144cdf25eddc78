import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { after, before, describe, it } from "node:test";
import type { RenderOptions } from "@pressroom/domain";
import { RenderEngine, RenderFailure, type SubresourceFetcher } from "./index";
import {
  browserProcesses,
  connectingFetcher,
  pdfInfo,
  pdfText,
  pngSize,
  recordingHttpServer,
  startEngine,
  tcpServer,
  testLogger,
} from "../test-support/engine";

const A4_LANDSCAPE: RenderOptions = {
  format: "A4",
  landscape: true,
  margin: { top: "10mm", right: "10mm", bottom: "10mm", left: "10mm" },
  headerHtml: "",
  footerHtml: "",
};

function failsWith(reason: RenderFailure["reason"]) {
  return (err: unknown) => {
    assert.ok(err instanceof RenderFailure, `expected a RenderFailure, got ${String(err)}`);
    assert.equal(err.reason, reason, err.message);
    assert.equal(err.retryable, reason === "crashed" || reason === "page_lost");
    return true;
  };
}

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

describe("render engine: network policy", () => {
  let engine: RenderEngine;
  before(async () => {
    engine = await startEngine({ slots: 1, deadlineMs: 15_000 });
  });
  after(() => engine.close());

  it("never shows a local file", async () => {
    const out = await engine.render({
      kind: "pdf",
      html: `<iframe src="file:///etc/passwd" style="width:600px;height:300px"></iframe>
        <object data="file:///etc/passwd" type="text/plain" width="600" height="300"></object>
        <p id="f"></p><script>fetch("file:///etc/passwd").then((r) => r.text()).then((t) => f.textContent = t, (e) => f.textContent = "fetch failed")</script>`,
    });
    const text = pdfText(out.data);
    assert.doesNotMatch(text, /root:/);
  });

  it("never lets Chromium reach a local server by itself", async () => {
    const server = await recordingHttpServer();
    try {
      await engine.render({
        kind: "pdf",
        html: `<link rel="preconnect" href="http://127.0.0.1:${server.port}"><link rel="stylesheet" href="http://localhost:${server.port}/s.css">
          <img src="http://127.0.0.1:${server.port}/img.png"><iframe src="http://127.0.0.1:${server.port}/frame"></iframe>
          <script>fetch("http://127.0.0.1:${server.port}/fetch").catch(() => {}); navigator.sendBeacon("http://127.0.0.1:${server.port}/beacon", "x");
          new Worker(URL.createObjectURL(new Blob(['fetch("http://127.0.0.1:${server.port}/worker").catch(() => {})'])));</script>`,
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(server.hits, []);
    } finally {
      await server.close();
    }
  });

  it("gives a WebSocket nothing to connect to", async () => {
    const server = await tcpServer();
    try {
      const out = await engine.render({
        kind: "pdf",
        html: `<p id="s">pending</p><script>
          const ws = new WebSocket("ws://127.0.0.1:${server.port}/");
          ws.onopen = () => s.textContent = "ws open"; ws.onerror = () => s.textContent = "ws error";
          const pc = new RTCPeerConnection({ iceServers: [{ urls: "stun:127.0.0.1:${server.port}" }] }); pc.createDataChannel("x");
          pc.createOffer().then((o) => pc.setLocalDescription(o));
          </script>`,
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(server.connections(), 0);
      assert.doesNotMatch(pdfText(out.data), /ws open/);
    } finally {
      await server.close();
    }
  });

  it("dismisses dialogs and closes popups without hanging", async () => {
    const out = await engine.render({
      kind: "pdf",
      deadlineMs: 10_000,
      html: `<p id="s"></p><script>
        alert("a"); const c = confirm("c"); const p = prompt("p");
        window.open("https://popup.test/"); window.open("about:blank", "_blank");
        addEventListener("beforeunload", (e) => { e.preventDefault(); e.returnValue = ""; });
        s.textContent = "after dialogs confirm=" + c + " prompt=" + p;
        </script><a id="d" href="data:text/plain,x" download="x.txt">d</a><script>d.click()</script>`,
    });
    assert.match(pdfText(out.data), /after dialogs confirm=false prompt=null/);
    // The next render on the same page is unaffected by the beforeunload handler.
    await engine.render({ kind: "pdf", html: "<p>next</p>" });
  });

  it("fails a document that navigates itself away", async () => {
    await assert.rejects(engine.render({ kind: "pdf", html: `<script>location.href = "https://elsewhere.test/"</script>` }), failsWith("blocked_navigation"));
    await assert.rejects(engine.render({ kind: "pdf", html: `<meta http-equiv="refresh" content="0">` }), failsWith("blocked_navigation"));
    assert.match(pdfText((await engine.render({ kind: "pdf", html: "<p>still fine</p>" })).data), /still fine/);
  });
});

describe("render engine: sub-requests", () => {
  let engine: RenderEngine;
  let silent: Awaited<ReturnType<typeof tcpServer>>;
  let origin: Awaited<ReturnType<typeof recordingHttpServer>>;
  const seen: string[] = [];

  before(async () => {
    silent = await tcpServer();
    origin = await recordingHttpServer();
    const fetcher: SubresourceFetcher = async (req) => {
      seen.push(req.url.href);
      // Redirect hops come back to the engine as 3xx; the fetcher never follows them.
      if (req.url.hostname === "frame.test") {
        if (req.url.pathname === "/") {
          const html = `<img src="https://frame.test/in-frame.svg"><script>new Worker(URL.createObjectURL(new Blob(['fetch("https://frame.test/from-worker")'])))</script>`;
          return { status: 200, headers: { "content-type": "text/html" }, body: Buffer.from(html) };
        }
        // The document's load (and so its print) waits until both workers have fetched, or 3 s:
        // a worker that had not run by then would die with the document, unseen either way.
        for (
          let i = 0;
          i < 150 && req.url.pathname === "/hold.svg" && !(seen.includes("https://frame.test/from-worker") && seen.includes("https://frame.test/top-worker"));
          i++
        ) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return {
          status: 200,
          headers: { "content-type": "image/svg+xml" },
          body: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'),
        };
      }
      if (req.url.hostname === "gzip.test") {
        assert.equal(req.headers["Accept-Encoding"], "gzip, deflate, br");
        const js = gzipSync('document.getElementById("z").textContent = "decoded " + "gzip";');
        return { status: 200, headers: { "content-type": "text/javascript", "content-encoding": "gzip" }, body: js };
      }
      if (req.url.hostname === "redirect.test") {
        return req.url.pathname === "/start.js"
          ? { status: 302, headers: { location: "https://redirect.test/final.js" }, body: Buffer.alloc(0) }
          : {
              status: 200,
              headers: { "content-type": "text/javascript" },
              body: Buffer.from('document.getElementById("s").textContent = "arrived after redirect";'),
            };
      }
      return connectingFetcher(req);
    };
    engine = await startEngine({ slots: 1, subrequestTimeoutMs: 500, deadlineMs: 15_000, fetchSubresource: fetcher });
  });
  after(async () => {
    await engine.close();
    await silent.close();
    await origin.close();
  });

  it("finishes when a sub-resource never answers (its own timeout, not the render's)", async () => {
    const out = await engine.render({
      kind: "pdf",
      html: `<p id="s">loading</p><img src="http://127.0.0.1:${silent.port}/never.png" onerror="s.textContent='image gave up'">`,
    });
    assert.ok(silent.connections() >= 1, "the fetcher really connected");
    assert.match(pdfText(out.data), /image gave up/);
  });

  it("sees the requests of cross-site frames and workers too", async () => {
    await engine.render({
      kind: "pdf",
      html: `<iframe src="https://frame.test/"></iframe><script>new Worker(URL.createObjectURL(new Blob(['fetch("https://frame.test/top-worker")'])))</script>
        <img src="https://frame.test/hold.svg">`,
    });
    assert.ok(seen.includes("https://frame.test/in-frame.svg"), "a cross-site frame's image");
    assert.ok(seen.includes("https://frame.test/top-worker"), "a worker's fetch");
    assert.ok(seen.includes("https://frame.test/from-worker"), "a cross-site frame's worker's fetch");
  });

  it("answers through the fetcher and replays redirects hop by hop", async () => {
    const out = await engine.render({
      kind: "pdf",
      html: `<p id="s">no script</p><script src="https://redirect.test/start.js"></script><img src="http://127.0.0.1:${origin.port}/allowed">
        <p id="z">not decoded</p><script src="https://gzip.test/z.js"></script>`,
    });
    assert.match(pdfText(out.data), /arrived after redirect/);
    assert.match(pdfText(out.data), /decoded gzip/);
    const hops = seen.filter((u) => u.startsWith("https://redirect.test/"));
    assert.deepEqual(hops, ["https://redirect.test/start.js", "https://redirect.test/final.js"]);
    // The fetcher (not Chromium) reached the local server.
    assert.ok(origin.hits.includes("GET /allowed"), origin.hits.join(" "));
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

describe("render engine: a page lost while its document runs", () => {
  // One slot and no spare: a lost page that were used again would fail every later job.
  let engine: RenderEngine;
  before(async () => {
    engine = await startEngine({ slots: 1, sparePages: 0, rendererHeapMiB: 64 });
  });
  after(() => engine.close());

  it("fails a document that closes its own window as its own doing, and never uses that page again", async () => {
    const before = engine.stats();
    await assert.rejects(engine.render({ kind: "pdf", html: "<p>work</p><script>window.close()</script>" }), (err: unknown) => {
      failsWith("window_closed")(err);
      assert.match((err as Error).message, /closed its own window/);
      return true;
    });
    await assert.rejects(
      engine.render({
        kind: "pdf",
        html: "<p>later</p><script>setTimeout(() => window.close(), 50); const t = Date.now(); while (Date.now() - t < 300) {}</script>",
      }),
      failsWith("window_closed"),
    );
    for (const n of [1, 2, 3]) assert.match(pdfText((await engine.render({ kind: "pdf", html: `<p>next ${n}</p>` })).data), new RegExp(`next ${n}`));
    assert.equal(engine.stats().relaunches, before.relaunches, "the browser stayed up: only the pages were replaced");
  });

  it("fails a document whose renderer runs out of memory as its own doing, with the browser up", async () => {
    const before = engine.stats();
    await assert.rejects(
      engine.render({ kind: "pdf", html: "<script>let a=[];for(;;)a.push(new Array(1e6).fill(1))</script>", deadlineMs: 20_000 }),
      failsWith("renderer_crashed"),
    );
    assert.match(pdfText((await engine.render({ kind: "pdf", html: "<p>after the bomb</p>" })).data), /after the bomb/);
    assert.equal(engine.stats().relaunches, before.relaunches);
    assert.equal(engine.stats().browserPid, before.browserPid);
  });

  it("cannot tell whose fault pages lost together are: retryable", async () => {
    const two = await startEngine({ slots: 2, sparePages: 0 });
    try {
      const busy = "<script>const t = Date.now(); while (Date.now() - t < 8000) {}</script>";
      const jobs = [two.render({ kind: "pdf", html: busy, deadlineMs: 20_000 }), two.render({ kind: "pdf", html: busy, deadlineMs: 20_000 })];
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const renderers = browserProcesses(two.stats().browserPid!).filter((p) => p.args.includes("--type=renderer"));
      assert.ok(renderers.length >= 2, `renderers: ${renderers.length}`);
      for (const { pid } of renderers) process.kill(pid, "SIGKILL");
      await Promise.all(jobs.map((job) => assert.rejects(job, failsWith("page_lost"))));
      assert.match(pdfText((await two.render({ kind: "pdf", html: "<p>after</p>" })).data), /after/);
    } finally {
      await two.close();
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

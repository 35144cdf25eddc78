import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { after, before, describe, it } from "node:test";
import type { RenderEngine, SubresourceFetcher } from "./index";
import { connectingFetcher, failsWith, pdfText, recordingHttpServer, startEngine, tcpServer } from "../test-support/engine";

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

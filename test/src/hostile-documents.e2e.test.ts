import assert from "node:assert/strict";
import http from "node:http";
import net, { type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { busyRenderSlots, descendantProcesses, expectRenderFailed, listen, rendersCharged } from "./test-support/hostile";
import { pdfText } from "./test-support/pdf";
import { eventually } from "./test-support/webhook-receiver";

/** The suite's limits, short so that every case ends quickly. */
const LIMITS = {
  RENDER_DEADLINE_MS: "6000",
  RENDER_MAX_PAGES: "50",
  RENDER_MAX_HTML_BYTES: String(2 * 1024 * 1024),
  RENDER_MAX_OUTPUT_BYTES: String(2 * 1024 * 1024),
  RENDER_SUBRESOURCE_BUDGET_BYTES: String(1024 * 1024),
  RENDER_CHROMIUM_PROCESS_MEMORY_MIB: "1024",
};

/** Windows the worker keeps for keys that rendered (issue 34): each a renderer that outlives its jobs. */
const KEY_WINDOWS = 2;

/** A decompression bomb: 32 MiB of zeros in a few KiB. */
const ZEROS = Buffer.alloc(32 * 1024 * 1024);
const BOMBS: Record<string, Buffer> = { deflate: deflateSync(ZEROS), "gzip, br": brotliCompressSync(gzipSync(ZEROS)) };

/**
 * Hostile documents (issue 29) sent by customers through POST /v1/render to
 * one running stack, in the production network policy but for two test-only
 * allowances: documents may reach loopback, and the port of the suite's own
 * server (the stand-in for a public host serving bombs and redirects). Each
 * case names the limit it hits (422 RENDER_FAILED naming it, or, for what is
 * refused while the document still renders, the refusal in the output), its
 * owner is charged one render (no refund), and another key's ordinary
 * document sent at the same time is served. Then the render pool has nothing
 * of them left: no slot busy, no Chromium process more than before, the same
 * render process.
 */
describe("hostile documents: each hits a named limit, is charged, and leaves nothing running", () => {
  let h: Harness;
  let site: Awaited<ReturnType<typeof listen<http.Server>>>;
  let origin: string;
  /** Listens on a port documents may not reach, and never answers. */
  let offPort: Awaited<ReturnType<typeof listen<net.Server>>>;
  /** Every request and upgrade the suite's server saw. */
  const hits: string[] = [];
  let renderPid: number;
  let chromiumBefore: number;

  before(async () => {
    offPort = await listen(net.createServer());
    const server = http.createServer((req, res) => {
      hits.push(req.url ?? "");
      const url = new URL(req.url ?? "/", "http://localhost");
      const headers = { "access-control-allow-origin": "*", "content-type": "text/plain" };
      if (url.pathname === "/bomb") {
        const coding = url.searchParams.get("coding") ?? "";
        res.writeHead(200, { ...headers, "content-encoding": coding });
        res.end(BOMBS[coding]);
      } else if (url.pathname === "/redirect") {
        res.writeHead(302, { ...headers, location: url.searchParams.get("to") ?? "/" });
        res.end();
      } else {
        res.writeHead(200, headers);
        res.end("public content");
      }
    });
    server.on("upgrade", (req: http.IncomingMessage, socket: Socket) => {
      hits.push(`upgrade ${req.url}`);
      socket.destroy();
    });
    site = await listen(server);
    const port = site.port;
    origin = `http://127.0.0.1:${port}`;
    h = await startHarness({
      env: { RENDER_SLOTS: "3", ...LIMITS },
      serviceEnv: {
        render: { RENDER_ALLOW_LOOPBACK: "true", RENDER_SUBRESOURCE_PORTS: `80,443,${port}`, RENDER_KEY_WINDOWS: String(KEY_WINDOWS) },
      },
    });
    const render = h.stack.services.processes.get("render")!;
    renderPid = render.child.pid!;
    // One ordinary render first: the pool is warm, and Chromium's processes are what an idle pool has.
    const { apiKey } = await h.admin.createKey("business");
    assert.equal((await h.api.post("/v1/render", { html: "<p>warm</p>", data: {} }, { key: apiKey })).status, 200);
    chromiumBefore = descendantProcesses(renderPid).length;
    assert.ok(chromiumBefore > 0, "the render worker runs Chromium");
  });
  after(async () => {
    await h?.stop();
    await site?.close();
    await offPort?.close();
  });

  /** Reads `url` with a synchronous XHR (the document's print waits for it) and writes what came back, or "refused". */
  const readSync = (label: string, url: string) => `<script>{
    const x = new XMLHttpRequest(); x.open("GET", ${JSON.stringify(url)}, false);
    try { x.send(); out.textContent += " ${label}:" + x.status } catch (e) { out.textContent += " ${label}:refused" }
  }</script>`;

  interface HostileCase {
    name: string;
    html: () => string;
    data?: unknown;
    /** The job fails 422 RENDER_FAILED, its message naming the limit… */
    fails?: RegExp;
    /** …or it renders, and its text shows what was refused. */
    shows?: RegExp;
    /** What must never appear in what it rendered. */
    never?: RegExp;
    /** Further checks once it ended. */
    then?: () => void;
  }

  const cases: HostileCase[] = [
    { name: "an infinite script loop", html: () => "<script>for (;;) {}</script>", fails: /6 s deadline/ },
    { name: "a memory bomb", html: () => "<script>const a = []; for (;;) a.push(new Array(1e6).fill(1))</script>", fails: /deadline|crashed/ },
    {
      // Outside the JavaScript heap, which its limit does not see: 100 MB at a time, up to three times the renderer's limit.
      // Not filled: the data limit counts what is allocated, so the bomb meets it at once even beside two busy cases on two cores.
      name: "a memory bomb through ArrayBuffers",
      html: () => "<script>const a = []; for (let i = 0; i < 30; i++) a.push(new Uint8Array(1e8))</script>",
      fails: /ran out of memory: more than 1024 MiB \(the renderer memory limit\)/,
    },
    {
      name: "a template that expands to megabytes (Handlebars blow-up)",
      html: () => "{{#each a}}{{#each @root.a}}{{#each @root.a}}<b>{{this}}</b>{{/each}}{{/each}}{{/each}}",
      data: { a: Array.from({ length: 50 }, () => "expand-expand-expand") },
      fails: /larger than 2 MiB \(the template output cap\)/,
    },
    {
      name: "10,000 pages",
      html: () => `<style>div { break-after: page }</style>${"<div>page</div>".repeat(10_000)}`,
      fails: /more than 50 pages \(the page cap\)/,
    },
    { name: "a page ten million pixels high", html: () => '<div style="height: 10000000px">tall</div>', fails: /more than 50 pages \(the page cap\)/ },
    {
      name: "a giant image (a canvas of random pixels)",
      html: () => `<canvas id="c" width="2000" height="2000" style="width: 100%"></canvas><script>
        const ctx = c.getContext("2d"); const img = ctx.createImageData(2000, 2000);
        for (let i = 0; i < img.data.length; i++) img.data[i] = Math.random() * 256;
        ctx.putImageData(img, 0, 0);
      </script>`,
      fails: /larger than 2 MiB \(the output size cap\)/,
    },
    {
      name: "a loop of alert, confirm and prompt dialogs",
      html: () => "<script>for (let i = 0; ; i++) { alert(i); confirm(i); prompt(i) }</script>",
      fails: /6 s deadline/,
    },
    {
      name: "popups (window.open, target=_blank)",
      html: () => `<p id="out">popups</p><a id="a" href="${origin}/popup-link" target="_blank">x</a><script>
        for (let i = 0; i < 20; i++) window.open("${origin}/popup-" + i, "_blank");
        a.click();
      </script>`,
      shows: /popups/,
      then: () =>
        assert.deepEqual(
          hits.filter((hit) => hit.startsWith("/popup")),
          [],
          "no popup loaded anything",
        ),
    },
    {
      name: "file: URLs",
      html: () => `<iframe src="file:///etc/passwd"></iframe><object data="file:///etc/passwd"></object><img src="file:///etc/hostname">
        <p id="out">file</p>${readSync("xhr", "file:///etc/passwd")}`,
      shows: /file xhr:refused/,
      never: /root:x:0/,
    },
    {
      name: "redirects to private addresses",
      html: () => {
        const to = (target: string) => `${origin}/redirect?to=${encodeURIComponent(target)}`;
        return `<p id="out">redirects</p>${readSync("metadata", to("http://169.254.169.254/latest/meta-data/"))}${readSync("lan", to("http://10.0.0.7/"))}${readSync(
          "mapped",
          to("http://[::ffff:192.168.1.1]/"),
        )}${readSync("public", `${origin}/public`)}`;
      },
      shows: /redirects metadata:refused lan:refused mapped:refused public:200/,
    },
    {
      name: "requests to ports other than 80 and 443 (an SMTP or Redis server)",
      html: () =>
        `<p id="out">ports</p>${readSync("direct", `http://127.0.0.1:${offPort.port}/`)}${readSync(
          "redirected",
          `${origin}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${offPort.port}/`)}`,
        )}<img src="http://127.0.0.1:${offPort.port}/img.png">`,
      shows: /ports direct:refused redirected:refused/,
      then: () => assert.equal(offPort.connections(), 0, "nothing connected to the port not allowed"),
    },
    {
      name: "websockets",
      html: () => `<p id="out">sockets</p><script>
        for (const url of ["ws://127.0.0.1:${new URL(origin).port}/ws", "wss://127.0.0.1:${new URL(origin).port}/wss"]) {
          const ws = new WebSocket(url); ws.onopen = () => out.textContent += " open";
        }
      </script>`,
      shows: /sockets/,
      never: /open/,
      then: () =>
        assert.deepEqual(
          hits.filter((hit) => hit.includes("ws")),
          [],
          "no websocket reached the server",
        ),
    },
    {
      name: "service workers",
      html: () => `<p id="out">workers</p><script>
        navigator.serviceWorker?.register("/sw.js").then(() => out.textContent += " registered", () => undefined);
        navigator.serviceWorker?.register("${origin}/sw.js").then(() => out.textContent += " registered", () => undefined);
      </script>`,
      shows: /workers/,
      never: /registered/,
      then: () => assert.ok(!hits.includes("/sw.js"), "no service worker script was fetched"),
    },
    {
      name: "a deflate decompression bomb",
      html: () => `<p id="out">bomb</p>${readSync("bomb", `${origin}/bomb?coding=deflate`)}`,
      fails: /more than 1 MiB \(the sub-resource budget\)/,
    },
    {
      name: "a decompression bomb in stacked encodings (gzip, then br)",
      html: () => `<img src="${origin}/bomb?coding=${encodeURIComponent("gzip, br")}">`,
      fails: /more than 1 MiB \(the sub-resource budget\)/,
    },
  ];

  describe("each case, three at a time", { concurrency: 3 }, () => {
    let n = 0;
    for (const doc of cases) {
      it(`${doc.name}: ${doc.fails ? "fails naming its limit" : "renders without it"}, charged, while another key is served`, async () => {
        const { apiKey: owner } = await h.admin.createKey("business");
        const { apiKey: other } = await h.admin.createKey("business");
        const hostile = h.api.post("/v1/render", { html: doc.html(), data: doc.data ?? {} }, { key: owner });
        const invoice = ++n;
        const ordinary = await h.api.post("/v1/render", { html: "<p>Invoice {{n}}</p>", data: { n: invoice } }, { key: other });
        assert.equal(ordinary.status, 200, `another key meanwhile: ${ordinary.text}`);
        assert.match(pdfText((await h.api.download(ordinary.json.url)).body), new RegExp(`Invoice ${invoice}`));

        const response = await hostile;
        if (doc.fails) expectRenderFailed(response, doc.fails, doc.name);
        else {
          assert.equal(response.status, 200, `${doc.name}: ${response.text}`);
          const text = pdfText((await h.api.download(response.json.url)).body).replace(/\s+/g, " ");
          if (doc.shows) assert.match(text, doc.shows, doc.name);
          if (doc.never) assert.doesNotMatch(text, doc.never, doc.name);
        }
        doc.then?.();
        assert.equal(await rendersCharged(h.api, owner), 1, `${doc.name}: its owner is charged one render, not refunded`);
      });
    }
  });

  it("leaves nothing running: no busy slot, no Chromium process more than before but the windows kept for keys, the same render process", async () => {
    const render = h.stack.services.processes.get("render")!;
    assert.equal(render.child.pid, renderPid);
    assert.equal(render.child.exitCode, null, "the render process is still running");
    await eventually("no render slot busy", async () => ((await busyRenderSlots(h.stack.ports.health.render)) === 0 ? true : undefined), 30_000, 200);
    const left = await eventually(
      "Chromium back to its idle processes",
      async () => {
        const processes = descendantProcesses(renderPid);
        // Each key that rendered may keep a window (a renderer) for its next job, at most KEY_WINDOWS of them.
        return processes.length <= chromiumBefore + KEY_WINDOWS ? processes : undefined;
      },
      30_000,
      250,
    );
    assert.ok(left.length > 0, "Chromium still runs for the next job");
    const ordinary = await h.api.post("/v1/render", { html: "<p>after them all</p>", data: {} }, { key: (await h.admin.createKey("business")).apiKey });
    assert.equal(ordinary.status, 200, ordinary.text);
  });

  endOfSuiteChecks(() => h);
});

import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { waitFor } from "@pressroom/stack";
import { pngSize } from "../../services/render/src/test-support/engine";
import { errorShape, type ApiResponse } from "./test-support/api";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { expectRenderFailed, listen, rendersCharged } from "./test-support/hostile";
import { pdfInfo, pdfText } from "./test-support/pdf";

/** pdfinfo's page size in points, to the point. */
function pageSize(pdf: Buffer): [number, number] {
  const match = /([\d.]+) x ([\d.]+) pts/.exec(pdfInfo(pdf)["Page size"] ?? "");
  assert.ok(match, "pdfinfo gives a page size");
  return [Math.round(Number(match[1])), Math.round(Number(match[2]))];
}

/**
 * Issue 46's choices a request makes about its document, through the public API of one running
 * stack: script errors that fail the job or are listed in its events, sub-resources that must
 * load, screenshots of HTML and pages. The stack may reach loopback (RENDER_ALLOW_LOOPBACK, test-only) on the port of the
 * suite's own web server, which stands in for a public site.
 */
describe("a request's choices about its document (issue 46)", () => {
  let h: Harness;
  let key: string;
  let site: Awaited<ReturnType<typeof listen<http.Server>>>;
  let origin: string;

  before(async () => {
    site = await listen(
      http.createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://localhost");
        if (url.pathname === "/ok.css") {
          res.writeHead(200, { "content-type": "text/css" });
          res.end(".styled::after { content: ' (sheet loaded)'; }");
        } else if (url.pathname === "/ok.svg") {
          res.writeHead(200, { "content-type": "image/svg+xml" });
          res.end(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`);
        } else if (url.pathname === "/throwing") {
          res.writeHead(200, { "content-type": "text/html" });
          res.end(`<p>pictured</p><script>throw new Error("from the page")</script>`);
        } else if (url.pathname === "/tall") {
          res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
          res.end(`<body style="margin:0"><div style="height:1400px"></div><div id="card" style="width:260px;height:90px;background:#246"></div></body>`);
        } else if (url.pathname === "/broken.css") {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end("down");
        } else {
          res.writeHead(404, { "content-type": "text/plain" });
          res.end("missing");
        }
      }),
    );
    origin = `http://127.0.0.1:${site.port}`;
    h = await startHarness({
      env: { RENDER_SLOTS: "2" },
      serviceEnv: { render: { RENDER_ALLOW_LOOPBACK: "true", RENDER_SUBRESOURCE_PORTS: `80,443,${site.port}` } },
    });
    ({ apiKey: key } = await h.admin.createKey("business"));
  });
  after(async () => {
    await h?.stop();
    await site?.close();
  });

  const render = (body: Record<string, unknown>) => h.api.post("/v1/render", { data: {}, ...body }, { key });
  const image = (body: Record<string, unknown>) => h.api.post("/v1/image", { data: {}, ...body }, { key });
  async function output(response: ApiResponse): Promise<Buffer> {
    assert.equal(response.status, 200, response.text);
    const download = await h.api.download(response.json.url);
    assert.equal(download.status, 200);
    return download.body;
  }
  const eventsOf = async (id: string) => {
    const job = await h.api.get(`/v1/jobs/${id}`, { key });
    assert.equal(job.status, 200, job.text);
    return job.json.events as { type: string; script_errors?: string[] }[];
  };

  describe("options.fail_on_script_error", () => {
    const throwing = `<p>printed anyway</p><script>throw new TypeError("total is not a number")</script>
      <script>Promise.reject(new RangeError("late rejection"))</script>`;

    it("by default (and when true) an uncaught exception fails the job 422 RENDER_FAILED naming it", async () => {
      expectRenderFailed(await render({ html: throwing }), /uncaught exception: TypeError: total is not a number$/);
      expectRenderFailed(await render({ html: throwing, options: { fail_on_script_error: true } }), /TypeError: total is not a number$/);
    });

    it("false renders the document and lists its uncaught exceptions, in order, in the job's succeeded event", async () => {
      const response = await render({ html: throwing, options: { fail_on_script_error: false } });
      assert.match(pdfText(await output(response)), /printed anyway/);
      const events = await eventsOf(response.json.id as string);
      const succeeded = events.find((event) => event.type === "job.succeeded");
      assert.deepEqual(succeeded?.script_errors, ["TypeError: total is not a number", "RangeError: late rejection"]);
      assert.ok(
        events.filter((event) => event.type !== "job.succeeded").every((event) => event.script_errors === undefined),
        "only the succeeded event lists them",
      );
    });

    it("a clean document lists none; an image takes the option too", async () => {
      const clean = await render({ html: "<p>clean</p>", options: { fail_on_script_error: false } });
      await output(clean);
      assert.ok((await eventsOf(clean.json.id as string)).every((event) => event.script_errors === undefined));

      expectRenderFailed(await image({ url: `${origin}/throwing` }), /uncaught exception: Error: from the page$/);
      const pictured = await image({ url: `${origin}/throwing`, options: { fail_on_script_error: false } });
      assert.equal((await output(pictured)).subarray(1, 4).toString("latin1"), "PNG");
      const succeeded = (await eventsOf(pictured.json.id as string)).find((event) => event.type === "job.succeeded");
      assert.deepEqual(succeeded?.script_errors, ["Error: from the page"]);
    });

    it("is refused when it is not true or false", async () => {
      const refused = await render({ html: "<p>x</p>", options: { fail_on_script_error: "no" } });
      assert.equal(refused.status, 422);
      assert.match(refused.json.error as string, /^options\.fail_on_script_error: must be true or false/);
    });
  });

  describe("options.fail_on_resource_error", () => {
    const page = (resources: string) => `<link rel="stylesheet" href="${origin}/ok.css"><p class="styled">text</p>${resources}`;

    it("fails the job 422 RENDER_FAILED naming the image that answered 404, without its query", async () => {
      const html = page(`<img src="${origin}/missing.png?token=s3cr3t-query#frag">`);
      const failed = await render({ html, options: { fail_on_resource_error: true } });
      expectRenderFailed(failed, new RegExp(`image http://127\\.0\\.0\\.1:${site.port}/missing\\.png failed to load: HTTP 404`));
      assert.doesNotMatch(failed.text, /s3cr3t-query|frag/);
      assert.match(pdfText(await output(await render({ html }))), /text \(sheet loaded\)/, "without the option the document renders");
    });

    it("names a stylesheet's 5xx, a font's 404, a script that got no answer, and the document's own missing file", async () => {
      expectRenderFailed(
        await render({ html: page(`<link rel="stylesheet" href="${origin}/broken.css?v=2">`), options: { fail_on_resource_error: true } }),
        new RegExp(`stylesheet http://127\\.0\\.0\\.1:${site.port}/broken\\.css failed to load: HTTP 500`),
      );
      const font = `<style>@font-face { font-family: Gone; src: url(${origin}/fonts/gone.woff2?x=1) } p { font-family: Gone }</style>`;
      expectRenderFailed(
        await render({ html: page(font), options: { fail_on_resource_error: true } }),
        new RegExp(`font http://127\\.0\\.0\\.1:${site.port}/fonts/gone\\.woff2 failed to load: HTTP 404`),
      );
      // Port 9 is not among the ports sub-resources may reach: the fetcher refuses it.
      expectRenderFailed(
        await render({ html: page(`<script src="http://127.0.0.1:9/app.js?key=abc"></script>`), options: { fail_on_resource_error: true } }),
        /script http:\/\/127\.0\.0\.1:9\/app\.js failed to load: no answer/,
      );
      expectRenderFailed(
        await render({ html: page(`<img src="assets/logo.png">`), options: { fail_on_resource_error: true } }),
        /image assets\/logo\.png \(the document's own\) failed to load: HTTP 404/,
      );
    });

    it("renders when every image, stylesheet and script loads", async () => {
      const html = page(`<img src="${origin}/ok.svg"><script>document.body.insertAdjacentHTML("beforeend", "<p>script ran</p>")</script>`);
      const text = pdfText(await output(await render({ html, options: { fail_on_resource_error: true } })));
      assert.match(text, /text \(sheet loaded\)/);
      assert.match(text, /script ran/);
    });
  });

  describe("the download and the page (options.disposition, paper formats, the header's date)", () => {
    const disposition = async (options: Record<string, unknown>) => {
      const response = await render({ html: "<p>x</p>", options });
      assert.equal(response.status, 200, response.text);
      const download = await h.api.download(response.json.url as string);
      assert.equal(download.status, 200);
      return download.headers["content-disposition"] ?? "";
    };

    it("disposition decides between inline and attachment, with or without a filename", async () => {
      assert.match(await disposition({}), /^inline; filename="document-job_[0-9a-z]+\.pdf"/, "the default without a filename");
      assert.match(await disposition({ disposition: "attachment" }), /^attachment; filename="document-job_[0-9a-z]+\.pdf"/);
      assert.match(await disposition({ filename: "report" }), /^attachment; filename="report\.pdf"/, "the default with a filename");
      assert.match(await disposition({ filename: "report", disposition: "inline" }), /^inline; filename="report\.pdf"/);
      const refused = await render({ html: "<p>x</p>", options: { disposition: "download" } });
      assert.equal(refused.status, 422);
      assert.match(refused.json.error as string, /^options\.disposition: must be inline or attachment/);
    });

    it("paper formats in any case, A0 to A6, B4, B5, Ledger and Executive", async () => {
      const sizes: [string, [number, number]][] = [
        ["a4", [595, 842]],
        ["A0", [2384, 3370]],
        ["a6", [298, 420]],
        ["B4", [709, 1001]],
        ["b5", [499, 709]],
        ["LEDGER", [1224, 792]],
        ["executive", [522, 756]],
      ];
      for (const [format, expected] of sizes) {
        const [width, height] = pageSize(await output(await render({ html: "<p>x</p>", options: { format } })));
        assert.ok(
          Math.abs(width - expected[0]) <= 1 && Math.abs(height - expected[1]) <= 1,
          `${format}: ${width} × ${height}, expected ${expected.join(" × ")}`,
        );
      }
      const refused = await render({ html: "<p>x</p>", options: { format: "A7" } });
      assert.equal(refused.status, 422);
      assert.match(
        refused.json.error as string,
        /^options\.format: must be one of A0, A1, A2, A3, A4, A5, A6, B4, B5, Letter, Legal, Tabloid, Ledger, Executive/,
      );
    });

    it("the header's and footer's date follow locale and time_zone", async () => {
      const dated = (locale: string, timeZone: string) => new Intl.DateTimeFormat(locale, { dateStyle: "short", timeZone }).format(new Date());
      const header = (options: Record<string, unknown>) =>
        render({
          html: "<p>body</p>",
          options: { margin: { top: "20mm" }, header_html: '<div style="font-size:10px">Printed <span class="date"></span></div>', ...options },
        });
      // Kiritimati is UTC+14 and Pago Pago UTC-11: their days always differ.
      const east = pdfText(await output(await header({ locale: "de-DE", time_zone: "Pacific/Kiritimati" })));
      assert.match(east, new RegExp(`Printed ${dated("de-DE", "Pacific/Kiritimati").replace(/\./g, "\\.")}`));
      const west = pdfText(await output(await header({ locale: "de-DE", time_zone: "Pacific/Pago_Pago" })));
      assert.match(west, new RegExp(`Printed ${dated("de-DE", "Pacific/Pago_Pago").replace(/\./g, "\\.")}`));
      const japanese = pdfText(await output(await header({ locale: "ja-JP", time_zone: "Asia/Tokyo" })));
      assert.match(japanese, new RegExp(`Printed ${dated("ja-JP", "Asia/Tokyo")}`));
      for (const [options, message] of [
        [{ locale: "not a locale" }, /^options\.locale: must be a BCP 47 language tag/],
        [{ time_zone: "Mars/Olympus" }, /^options\.time_zone: must be an IANA time zone/],
      ] as const) {
        const refused = await header(options);
        assert.equal(refused.status, 422, refused.text);
        assert.match(refused.json.error as string, message);
      }
    });
  });

  describe('"async": true (issue 46, item 3)', () => {
    /** Polls the job a 202 named until it ended; answers it. */
    async function ended(response: ApiResponse): Promise<{ status: string; url: string | null }> {
      assert.equal(response.status, 202, response.text);
      const id = response.json.id as string;
      assert.deepEqual(response.json, { id, status: "queued" });
      assert.equal(response.headers.location, `/v1/jobs/${id}`);
      let job: { status: string; url: string | null } = { status: "queued", url: null };
      await waitFor(
        `job ${id} ended`,
        async () => {
          job = (await h.api.get(response.headers.location!, { key })).json as typeof job;
          return job.status === "succeeded" || job.status === "failed";
        },
        30_000,
        200,
      );
      return job;
    }

    it("render and image answer 202 at once with the job and its Location; the job then ends as a sync one would", async () => {
      const slow = `<p id="out">early</p><script>addEventListener("load", () => setTimeout(() => { out.textContent = "ready"; window.ready = true }, 1500))</script>`;
      const started = Date.now();
      const accepted = await render({ html: slow, async: true, options: { wait_for: { expression: "window.ready" } } });
      assert.ok(Date.now() - started < 1_500, "answered before the document was ready");
      const job = await ended(accepted);
      assert.equal(job.status, "succeeded", JSON.stringify(job));
      assert.match(pdfText((await h.api.download(job.url!)).body), /ready/);

      const picture = await ended(await image({ url: `${origin}/throwing`, async: true, options: { fail_on_script_error: false } }));
      assert.equal(picture.status, "succeeded", JSON.stringify(picture));
      assert.equal((await h.api.download(picture.url!)).headers["content-type"], "image/png");
    });

    it("a failing document ends failed in the job, not in the answer; Accept for the document is ignored", async () => {
      const failed = await ended(await render({ html: `<script>throw new Error("boom")</script>`, async: true }));
      assert.equal(failed.status, "failed");
      const asked = await h.api.post("/v1/render", { html: "<p>x</p>", data: {}, async: true }, { key, headers: { accept: "application/pdf" } });
      assert.equal(asked.headers["content-type"]?.split(";")[0], "application/json");
      assert.equal((await ended(asked)).status, "succeeded");
    });

    it("an Idempotency-Key replay answers the same 202; async: false waits as before; a non-boolean is refused", async () => {
      const headers = { "idempotency-key": `async-${Date.now()}` };
      const first = await h.api.post("/v1/render", { html: "<p>once</p>", data: {}, async: true }, { key, headers });
      const again = await h.api.post("/v1/render", { html: "<p>once</p>", data: {}, async: true }, { key, headers });
      assert.equal(again.status, 202, again.text);
      assert.equal(again.json.id, first.json.id);
      assert.equal(again.headers["idempotent-replayed"], "true");
      await ended(first);
      assert.equal((await render({ html: "<p>x</p>", async: false })).status, 200);
      const refused = await render({ html: "<p>x</p>", async: "yes" });
      assert.equal(refused.status, 422);
      assert.match(refused.json.error as string, /^async: must be true or false/);
    });
  });

  describe("Prefer: wait=N (issue 46, item 10)", () => {
    it("a request over the key's concurrency waits up to N s for a slot; without the header, or past N, 429 CONCURRENCY_EXCEEDED", async () => {
      // The free plan renders one document at a time.
      const { apiKey: free } = await h.admin.createKey("free");
      const post = (prefer?: string) =>
        h.api.post("/v1/render", { html: "<p>next</p>", data: {} }, { key: free, headers: prefer === undefined ? {} : { prefer } });
      const holding = await h.api.post("/v1/render", { html: "<p>slow</p>", data: {}, async: true, options: { wait_for: { delay_ms: 4_000 } } }, { key: free });
      assert.equal(holding.status, 202, holding.text);
      for (const [prefer, name] of [
        [undefined, "without the header"],
        ["wait=1", "a wait shorter than the render in flight"],
      ] as const) {
        const refused = await post(prefer);
        assert.equal(refused.status, 429, `${name}: ${refused.text}`);
        assert.equal(refused.json.code, "CONCURRENCY_EXCEEDED", name);
      }
      const waited = await post("respond-async, wait=30");
      assert.equal(waited.status, 200, waited.text);
      assert.equal(waited.json.status, "succeeded");
      const first = await h.api.get(`/v1/jobs/${holding.json.id as string}`, { key: free });
      assert.equal(first.json.status, "succeeded", "the slot came free when the job in flight ended");
    });
  });

  describe("POST /v1/screenshot (issue 46, item 2)", () => {
    const screenshot = (body: Record<string, unknown>, headers: Record<string, string> = {}, as = key) =>
      h.api.post("/v1/screenshot", body, { key: as, headers });
    const size = async (body: Record<string, unknown>) => pngSize(await output(await screenshot(body)));
    /** A page 1,800 CSS px tall whose box's id comes from the data. */
    const tall = `<body style="margin:0"><div style="height:1800px;background:#eee"><div id="{{id}}" style="margin-left:30px;width:120px;height:80px;background:#c30"></div></div></body>`;

    it("makes a PNG of raw HTML filled with data: the viewport times the scale, the whole page, one element, a clip", async () => {
      const response = await screenshot({ html: tall, data: { id: "box-7" }, options: { width: 400, height: 300, device_scale_factor: 2 } });
      assert.equal(response.json.content_type, "image/png", response.text);
      assert.deepEqual(pngSize(await output(response)), { width: 800, height: 600 });
      assert.deepEqual(await size({ html: tall, data: { id: "x" }, options: { width: 400, height: 300, full_page: true } }), { width: 400, height: 1800 });
      // The element is found by the id the data gave it: the html was filled before it was captured.
      assert.deepEqual(await size({ html: tall, data: { id: "box-7" }, options: { selector: "#box-7", device_scale_factor: 2 } }), { width: 240, height: 160 });
      assert.deepEqual(await size({ html: tall, data: {}, options: { clip: { x: 10, y: 1200, width: 150, height: 70 } } }), { width: 150, height: 70 });
      assert.deepEqual(await size({ html: "<p>no data needed</p>" }), { width: 1280, height: 800 }, "the default viewport; data defaults to {}");
    });

    it("answers jpeg bytes for Accept: image/jpeg, and webp by format", async () => {
      const jpeg = await screenshot({ html: "<h1>Photo</h1>", options: { format: "jpeg", quality: 60 } }, { accept: "image/jpeg" });
      assert.equal(jpeg.status, 200, jpeg.text);
      assert.equal(jpeg.headers["content-type"], "image/jpeg");
      assert.deepEqual([...jpeg.body.subarray(0, 3)], [0xff, 0xd8, 0xff]);
      assert.match(jpeg.headers["pressroom-job-id"] ?? "", /^job_/);
      const webp = await output(await screenshot({ html: "<h1>Web</h1>", options: { format: "webp" } }));
      assert.deepEqual([webp.subarray(0, 4).toString("latin1"), webp.subarray(8, 12).toString("latin1")], ["RIFF", "WEBP"]);
    });

    it("takes a url through the outbound guard: an element below the fold of a page, and a port the guard refuses", async () => {
      assert.deepEqual(await size({ url: `${origin}/tall`, options: { selector: "#card" } }), { width: 260, height: 90 });
      assert.deepEqual(await size({ url: `${origin}/tall`, options: { width: 500, height: 400, full_page: true } }), { width: 500, height: 1490 });
      expectRenderFailed(await screenshot({ url: "http://127.0.0.1:9/page" }), /the url http:\/\/127\.0\.0\.1:9\/page could not be rendered/);
    });

    it('"async": true answers 202 with Location at once; the job is an image job that ends with the image', async () => {
      const accepted = await screenshot({ html: tall, data: { id: "a" }, async: true, options: { full_page: true } });
      assert.equal(accepted.status, 202, accepted.text);
      assert.deepEqual(accepted.json, { id: accepted.json.id, status: "queued" });
      assert.equal(accepted.headers.location, `/v1/jobs/${accepted.json.id as string}`);
      let job: Record<string, unknown> = {};
      await waitFor(
        "the screenshot job ended",
        async () => {
          job = (await h.api.get(accepted.headers.location!, { key })).json as Record<string, unknown>;
          return job.status === "succeeded" || job.status === "failed";
        },
        30_000,
        200,
      );
      assert.deepEqual([job.status, job.kind, job.content_type], ["succeeded", "image", "image/png"], JSON.stringify(job));
      assert.deepEqual(pngSize((await h.api.download(job.url as string)).body), { width: 1280, height: 1800 });
    });

    it("counts one quota unit, a selector that matches nothing too: 422 RENDER_FAILED naming it, charged", async () => {
      const { apiKey: own } = await h.admin.createKey("pro");
      const before = await rendersCharged(h.api, own);
      assert.equal((await screenshot({ html: "<p>one</p>" }, {}, own)).status, 200);
      assert.equal(await rendersCharged(h.api, own), before + 1);
      const missing = await screenshot({ html: "<p>one</p>", options: { selector: "#chart" } }, {}, own);
      expectRenderFailed(missing, /^options\.selector "#chart" matches no element in the page$/);
      assert.match(errorShape(missing).hint, /selector/);
      assert.equal(await rendersCharged(h.api, own), before + 2, "the document's own failure is charged");
    });

    it("refuses bad combinations 422 PAYLOAD_INVALID naming the field, uncharged; /v1/image keeps its template contract", async () => {
      const clip = { x: 0, y: 0, width: 10, height: 10 };
      for (const [body, message] of [
        [{ html: "x", options: { selector: "#a", clip } }, /^options\.clip: give one of full_page, selector and clip, not selector and clip/],
        [{ html: "x", options: { full_page: true, clip } }, /^options\.clip: give one of full_page, selector and clip, not full_page and clip/],
        [{ html: "x", url: `${origin}/tall` }, /^exactly one of html, url is required/],
        [{ data: {} }, /^exactly one of html, url is required/],
        [{ template_id: "og-image", data: {} }, /^unknown field: template_id/],
      ] as const) {
        const refused = await screenshot(body);
        assert.equal(refused.status, 422, refused.text);
        const error = errorShape(refused);
        assert.equal(error.code, "PAYLOAD_INVALID");
        assert.match(error.error, message);
        assert.equal(refused.headers["pressroom-job-id"], undefined, "refused before admission: no job");
      }
      const templateOnly = await image({ html: "<p>x</p>" });
      assert.equal(templateOnly.status, 422);
      assert.match(errorShape(templateOnly).error, /^unknown field: html/);
    });
  });

  endOfSuiteChecks(() => h);
});

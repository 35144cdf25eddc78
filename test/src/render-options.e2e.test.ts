import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { errorShape, type ApiResponse } from "./test-support/api";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { expectRenderFailed, listen } from "./test-support/hostile";
import { pdfInfo, pdfText, pngSize } from "./test-support/pdf";

/** pdfinfo's page size in points, to the point (Chromium rounds A4 to 596 × 842). */
function pageSize(pdf: Buffer): [number, number] {
  const match = /([\d.]+) x ([\d.]+) pts/.exec(pdfInfo(pdf)["Page size"] ?? "");
  assert.ok(match, "pdfinfo gives a page size");
  return [Math.round(Number(match[1])), Math.round(Number(match[2]))];
}

/** Asserts a page size within a point of `expected`. */
function assertPageSize(pdf: Buffer, expected: [number, number], message?: string): void {
  const [width, height] = pageSize(pdf);
  assert.ok(
    Math.abs(width - expected[0]) <= 1 && Math.abs(height - expected[1]) <= 1,
    `${message ?? "page size"}: ${width} × ${height}, expected ${expected.join(" × ")}`,
  );
}

/** The colour of the first page's centre, rasterised by poppler's pdftoppm (a binary PPM). */
function centreColour(pdf: Buffer): [number, number, number] {
  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-ppm-"));
  try {
    writeFileSync(path.join(dir, "in.pdf"), pdf);
    execFileSync("pdftoppm", ["-r", "10", "-f", "1", "-l", "1", "-singlefile", path.join(dir, "in.pdf"), path.join(dir, "out")]);
    const ppm = readFileSync(path.join(dir, "out.ppm"));
    const header = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(ppm.subarray(0, 32).toString("latin1"));
    assert.ok(header, "a binary PPM");
    const [width, height] = [Number(header[1]), Number(header[2])];
    const at = header[0].length + (Math.floor(height / 2) * width + Math.floor(width / 2)) * 3;
    return [ppm[at]!, ppm[at + 1]!, ppm[at + 2]!];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A PNG's colour type (6: RGBA, 2: RGB), from its IHDR chunk. */
const pngColourType = (png: Buffer) => png[25];

/**
 * Issue 33, part A, through the public API of one running stack: every page,
 * header and footer, readiness and image option and the url source, each
 * looked at in the output itself (pdfinfo, pdftotext, a rasterised pixel,
 * image magic bytes and alpha), and every refusal in the three-field shape.
 * The stack may reach loopback (RENDER_ALLOW_LOOPBACK, test-only) on the
 * port of the suite's own web server, which stands in for a public site.
 */
describe("render options and the url source (issue 33, part A)", () => {
  let h: Harness;
  let key: string;
  let site: Awaited<ReturnType<typeof listen<http.Server>>>;
  let offPort: Awaited<ReturnType<typeof listen<net.Server>>>;
  let origin: string;

  before(async () => {
    offPort = await listen(net.createServer());
    site = await listen(
      http.createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://localhost");
        if (url.pathname === "/article") {
          res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
          res.end(`<!doctype html><html><head><title>An article</title><link rel="stylesheet" href="style.css"></head>
            <body><h1>Public article</h1><p class="styled">styled by its own sheet</p></body></html>`);
        } else if (url.pathname === "/style.css") {
          res.writeHead(200, { "content-type": "text/css" });
          res.end(".styled::after { content: ' (sheet loaded)'; }");
        } else if (url.pathname === "/moved") {
          res.writeHead(301, { location: "/article" });
          res.end();
        } else if (url.pathname === "/away") {
          res.writeHead(302, { location: `http://127.0.0.1:${offPort.port}/secret` });
          res.end();
        } else if (url.pathname === "/slow.svg") {
          setTimeout(() => {
            res.writeHead(200, { "content-type": "image/svg+xml", "access-control-allow-origin": "*" });
            res.end(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`);
          }, 1_500);
        } else if (url.pathname === "/data.json") {
          res.writeHead(200, { "content-type": "application/json" });
          res.end("{}");
        } else {
          res.writeHead(404, { "content-type": "text/html" });
          res.end("<p>missing</p>");
        }
      }),
    );
    origin = `http://127.0.0.1:${site.port}`;
    h = await startHarness({
      env: { RENDER_SLOTS: "2", RENDER_DEADLINE_MS: "8000" },
      serviceEnv: { render: { RENDER_ALLOW_LOOPBACK: "true", RENDER_SUBRESOURCE_PORTS: `80,443,${site.port}` } },
    });
    ({ apiKey: key } = await h.admin.createKey("business"));
  });
  after(async () => {
    await h?.stop();
    await site?.close();
    await offPort?.close();
  });

  const render = (body: Record<string, unknown>) => h.api.post("/v1/render", { data: {}, ...body }, { key });
  const image = (body: Record<string, unknown>) => h.api.post("/v1/image", { data: {}, ...body }, { key });
  /** The document a succeeded sync job made. */
  async function output(response: ApiResponse): Promise<Buffer> {
    assert.equal(response.status, 200, response.text);
    const download = await h.api.download(response.json.url);
    assert.equal(download.status, 200);
    return download.body;
  }
  const sampleData = async (id: string): Promise<Record<string, unknown>> => {
    const catalog = (await h.api.get("/v1/templates", { key })).json.templates as { id: string; sample_data: Record<string, unknown> }[];
    return catalog.find((template) => template.id === id)!.sample_data;
  };
  const pdf = async (body: Record<string, unknown>) => output(await render(body));
  const refused = (response: ApiResponse, message: RegExp) => {
    assert.equal(response.status, 422, response.text);
    const error = errorShape(response);
    assert.equal(error.code, "PAYLOAD_INVALID");
    assert.match(error.error, message);
    assert.ok(error.hint.length > 0);
  };

  describe("the page", () => {
    const pages = (n: number) => Array.from({ length: n }, (_, i) => `<p style="break-after:page">page ${i + 1}</p>`).join("");

    it("format and landscape, or width and height in CSS lengths", async () => {
      assertPageSize(await pdf({ html: "<p>x</p>", options: { format: "A5" } }), [420, 595]);
      assertPageSize(await pdf({ html: "<p>x</p>", options: { format: "Letter", landscape: true } }), [792, 612]);
      assertPageSize(await pdf({ html: "<p>x</p>", options: { width: "100mm", height: "2in" } }), [283, 144]);
      assertPageSize(await pdf({ html: "<p>x</p>", options: { format: "Tabloid" } }), [792, 1224]);
    });

    it("override the template's page settings", async () => {
      const data = await sampleData("invoice");
      assertPageSize(await pdf({ template_id: "invoice", data }), [595, 842], "the template's A4");
      const a5 = await pdf({ template_id: "invoice", data, options: { format: "A5", landscape: true } });
      assertPageSize(a5, [595, 420]);
      assert.match(pdfText(a5), /Page 1 of \d/, "the template's footer stays");
    });

    it("margins make room for a header and footer filled with the request's data and Chromium's page classes", async () => {
      const out = await pdf({
        html: `<title>Quarterly statement</title>${pages(3)}`,
        data: { customer: "Ada Lovelace" },
        options: {
          margin: { top: "25mm", bottom: "25mm" },
          header_html: `<div style="font-size:10px">Statement for {{customer}}: <span class="title"></span></div>`,
          footer_html: `<div style="font-size:10px">Sheet <span class="pageNumber"></span> of <span class="totalPages"></span></div>`,
        },
      });
      const text = pdfText(out);
      assert.equal((text.match(/Statement for Ada Lovelace: Quarterly statement/g) ?? []).length, 3);
      for (const n of [1, 2, 3]) assert.match(text, new RegExp(`Sheet ${n} of 3`));
    });

    it("page_ranges keeps only the asked pages; scale shrinks the content onto fewer pages", async () => {
      const ranged = await pdf({ html: pages(5), options: { page_ranges: "2-3,5" } });
      assert.equal(pdfInfo(ranged).Pages, "3");
      assert.doesNotMatch(pdfText(ranged), /page 1\b|page 4\b/);
      const tall = `<div style="height:2500px;border:1px solid">tall</div>`;
      const full = Number(pdfInfo(await pdf({ html: tall })).Pages);
      const scaled = Number(pdfInfo(await pdf({ html: tall, options: { scale: 0.3 } })).Pages);
      assert.ok(full >= 3 && scaled === 1, `${full} pages at scale 1, ${scaled} at 0.3`);
    });

    it("print_background, prefer_css_page_size and media", async () => {
      const red = `<style>html,body{background:#f00;height:100%}</style><p>x</p>`;
      const [r] = centreColour(await pdf({ html: red, options: { format: "A5" } }));
      assert.ok(r > 200, "backgrounds print by default");
      const plain = centreColour(await pdf({ html: red, options: { format: "A5", print_background: false } }));
      assert.deepEqual(plain, [255, 255, 255], "print_background false leaves the page white");

      const css = `<style>@page { size: 100mm 100mm }</style><p>x</p>`;
      assertPageSize(await pdf({ html: css, options: { format: "A4" } }), [595, 842], "the request's format wins");
      assertPageSize(await pdf({ html: css, options: { format: "A4", prefer_css_page_size: true } }), [283, 283]);
      assertPageSize(await pdf({ html: css }), [283, 283], "raw HTML keeps its @page size by default");

      const media = `<style>.s{display:none} @media screen {.s{display:block} .p{display:none}}</style><p class="s">on screen</p><p class="p">on paper</p>`;
      assert.match(pdfText(await pdf({ html: media, options: { media: "screen" } })), /on screen/);
      assert.match(pdfText(await pdf({ html: media })), /on paper/);
    });
  });

  describe("wait_for", () => {
    const late = `<p id="out">early</p><script>addEventListener("load", () => setTimeout(() => { out.textContent = "ready now"; window.ready = true; }, 400))</script>`;

    it("a selector, an expression, a delay and an idle network each hold the print until the page is ready", async () => {
      assert.match(pdfText(await pdf({ html: late })), /early/, "without wait_for, the page prints at once");
      assert.match(pdfText(await pdf({ html: late, options: { wait_for: { expression: "window.ready" } } })), /ready now/);
      assert.match(pdfText(await pdf({ html: late, options: { wait_for: { delay_ms: 1_000 } } })), /ready now/);
      const appears = `<script>addEventListener("load", () => setTimeout(() => document.body.insertAdjacentHTML("beforeend", "<p id=done>appeared</p>"), 400))</script>`;
      assert.match(pdfText(await pdf({ html: appears, options: { wait_for: { selector: "#done" } } })), /appeared/);
      const fetching = `<p id="out">loading</p><script>addEventListener("load", () => setTimeout(() => { const i = new Image(); i.onload = () => { out.textContent = "image loaded" }; i.src = "${origin}/slow.svg" }, 100))</script>`;
      assert.match(pdfText(await pdf({ html: fetching, options: { wait_for: { network_idle: true } } })), /image loaded/);
    });

    it("a condition not met within the deadline fails the job 422 RENDER_FAILED naming it", async () => {
      expectRenderFailed(
        await render({ html: "<p>x</p>", options: { wait_for: { selector: "#never" } } }),
        /wait_for selector "#never" was not met within the render deadline/,
      );
      expectRenderFailed(
        await render({ html: "<p>x</p>", options: { wait_for: { expression: "window.never" } } }),
        /wait_for expression "window.never" was not met/,
      );
    });
  });

  describe("the url source", () => {
    it("renders a public page with its own sub-resources, through redirects", async () => {
      const text = pdfText(await pdf({ url: `${origin}/moved`, options: { format: "A5" } }));
      assert.match(text, /Public article/);
      assert.match(text, /styled by its own sheet \(sheet loaded\)/);
    });

    it("an image of a url in the asked viewport and device scale", async () => {
      const png = await output(await image({ url: `${origin}/article`, options: { width: 400, height: 300, device_scale_factor: 2 } }));
      assert.deepEqual(pngSize(png), { width: 800, height: 600 });
      const plain = await output(await image({ url: `${origin}/article` }));
      assert.deepEqual(pngSize(plain), { width: 1280, height: 800 });
    });

    it("a page that is missing, not HTML, or redirected off the allowed network fails 422 RENDER_FAILED saying why", async () => {
      expectRenderFailed(await render({ url: `${origin}/nothing` }), /could not be rendered: it answered HTTP 404/);
      expectRenderFailed(await render({ url: `${origin}/data.json` }), /application\/json, not an HTML page/);
      expectRenderFailed(await render({ url: `${origin}/away` }), new RegExp(`could not be rendered: .*port ${offPort.port}`));
      assert.equal(offPort.connections(), 0, "the redirect's target was never reached");
    });

    it("is refused at the door when it is not an http(s) URL, or too long", async () => {
      refused(await render({ url: "file:///etc/passwd" }), /^url: scheme file is not allowed/);
      refused(await render({ url: `https://example.com/${"a".repeat(2048)}` }), /^url: must be at most 2048 characters/);
      refused(await render({ url: `${origin}/article`, html: "<p>x</p>" }), /exactly one of template_id, html, url/);
    });
  });

  describe("images", () => {
    it("jpeg and webp, said in content_type, and transparent png", async () => {
      const data = await sampleData("og-image");
      const jpeg = await image({ template_id: "og-image", data, options: { format: "jpeg", quality: 60 } });
      assert.equal(jpeg.json.content_type, "image/jpeg");
      const jpegBytes = await output(jpeg);
      assert.deepEqual([...jpegBytes.subarray(0, 3)], [0xff, 0xd8, 0xff]);
      const webp = await image({ template_id: "og-image", data, options: { format: "webp" } });
      assert.equal(webp.json.content_type, "image/webp");
      const webpBytes = await output(webp);
      assert.equal(webpBytes.subarray(0, 4).toString("latin1"), "RIFF");
      assert.equal(webpBytes.subarray(8, 12).toString("latin1"), "WEBP");

      const page = `${origin}/article`;
      const transparent = await output(await image({ url: page, options: { width: 200, height: 100, omit_background: true } }));
      assert.equal(pngColourType(transparent), 6, "RGBA");
      const opaque = await output(await image({ url: page, options: { width: 200, height: 100 } }));
      assert.equal(pngColourType(opaque), 2, "RGB, no alpha");
    });

    it("answers the image itself when Accept asks for its type", async () => {
      const response = await h.api.post(
        "/v1/image",
        { url: `${origin}/article`, data: {}, options: { format: "jpeg", width: 100, height: 100 } },
        { key, headers: { accept: "image/jpeg" } },
      );
      assert.equal(response.status, 200, response.text);
      assert.equal(response.headers["content-type"], "image/jpeg");
      assert.deepEqual([...response.body.subarray(0, 3)], [0xff, 0xd8, 0xff]);
      // Another image type than the job makes: the JSON, never jpeg bytes labelled as asked.
      const other = await h.api.post(
        "/v1/image",
        { url: `${origin}/article`, data: {}, options: { format: "jpeg", width: 100, height: 100 } },
        { key, headers: { accept: "image/png" } },
      );
      assert.equal(other.status, 200, other.text);
      assert.match(other.headers["content-type"] ?? "", /^application\/json/);
      assert.equal(other.json.content_type, "image/jpeg");
    });

    it("refuses options that do not fit the source or the format", async () => {
      refused(await image({ template_id: "og-image", options: { width: 100 } }), /^options\.width: applies to a url only/);
      refused(await image({ url: `${origin}/article`, options: { quality: 50 } }), /^options\.quality: quality applies to jpeg and webp only/);
      refused(await image({ url: `${origin}/article`, options: { format: "jpeg", omit_background: true } }), /^options\.omit_background/);
    });
  });

  describe("filename", () => {
    it("names the download, made safe, as an attachment with filename* for non-ASCII", async () => {
      const response = await render({ html: "<p>x</p>", options: { filename: 'Rechnung März/"2026"' } });
      const download = await h.api.download((response.json as { url: string }).url);
      assert.equal(
        download.headers["content-disposition"],
        `attachment; filename="Rechnung M_rz__2026_.pdf"; filename*=UTF-8''Rechnung%20M%C3%A4rz__2026_.pdf`,
      );
      const plain = await h.api.download((await render({ html: "<p>x</p>" })).json.url);
      assert.match(plain.headers["content-disposition"] ?? "", /^inline; filename="document-job_/);
      refused(await render({ html: "<p>x</p>", options: { filename: "x".repeat(201) } }), /^options\.filename: must be at most 200 characters/);
    });
  });

  describe("refusals", () => {
    it("unknown options, at any depth, are named", async () => {
      refused(await render({ html: "<p>x</p>", options: { colour: "red" } }), /^options: unknown option: colour$/);
      refused(await render({ html: "<p>x</p>", options: { margin: { centre: "1mm" } } }), /^options\.margin: unknown option: centre$/);
      refused(await image({ url: `${origin}/article`, options: { landscape: true } }), /^options: unknown option: landscape$/);
    });

    it("values out of range, and options that go together", async () => {
      refused(await render({ html: "<p>x</p>", options: { scale: 3 } }), /^options\.scale: must be from 0.1 to 2/);
      refused(await render({ html: "<p>x</p>", options: { width: "10in" } }), /^options\.height: width and height go together/);
      refused(await render({ html: "<p>x</p>", options: { wait_for: { delay_ms: 10_001 } } }), /^options\.wait_for\.delay_ms/);
      refused(await render({ html: "<p>x</p>", options: { wait_for: { selector: "a", delay_ms: 5 } } }), /must name exactly one condition/);
      refused(await render({ html: "<p>x</p>", options: { format: "B6" } }), /^options\.format: must be one of/);
      refused(await render({ html: "<p>x</p>", options: { width: "0", height: "10in" } }), /^options\.width: must be from 1 to 200 inches$/);
      refused(await render({ html: "<p>x</p>", options: { format: "A5", margin: { top: "100mm", bottom: "100mm" } } }), /^options\.margin: must leave/);
      const permissions = { print: true, copy: true, modify: true, annotate: true };
      const dash = await render({ html: "<p>x</p>", options: { encrypt: { owner_password: "--hunter2", permissions } } });
      refused(dash, /^options\.encrypt\.owner_password: must not start with -$/);
      assert.doesNotMatch(dash.text, /hunter2/);
      refused(
        await render({ html: "<p>x</p>", options: { encrypt: { owner_password: "o", user_password: "a\nb", permissions } } }),
        /^options\.encrypt\.user_password: must not contain control characters$/,
      );
    });
  });

  endOfSuiteChecks(() => h);
});

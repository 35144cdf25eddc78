import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { errorShape, type ApiResponse } from "./test-support/api";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { assertPageSize, pdfInfo, pdfText, pngSize } from "./test-support/pdf";

/**
 * The template catalog and rendering over HTTP against the whole running
 * system (the render pool with Chromium included): the public catalog, every
 * built-in template rendering its sample data to a valid PDF of its page size
 * or a PNG of its declared size, previews, data-schema validation naming the
 * path, and the checks that need the catalog (template exists, right kind).
 */

interface CatalogEntry {
  id: string;
  version: number;
  name: string;
  description: string;
  output: "pdf" | "png";
  page?: { format: string; landscape: boolean; margin: Record<string, string>; header: boolean; footer: boolean };
  width?: number;
  height?: number;
  device_scale_factor?: 1 | 2;
  data_schema: Record<string, unknown>;
  sample_data: Record<string, unknown>;
  preview_url: string;
}

/** Page sizes in PDF points (portrait). */
const PAGE_POINTS: Record<string, [number, number]> = {
  A3: [841.89, 1190.55],
  A4: [595.28, 841.89],
  A5: [419.53, 595.28],
  Letter: [612, 792],
  Legal: [612, 1008],
  Tabloid: [792, 1224],
};

/** Preview sizes of PDF templates in CSS pixels (portrait), as the catalog renders them. */
const PAGE_PIXELS: Record<string, [number, number]> = { A4: [794, 1123], A5: [559, 794], Letter: [816, 1056], Legal: [816, 1344] };

function expectError(response: ApiResponse, status: number, code: string): string {
  const body = errorShape(response);
  assert.equal(response.status, status, response.text);
  assert.equal(body.code, code, response.text);
  return body.error;
}

function pageSize(info: Record<string, string>): [number, number] {
  const match = /^([\d.]+) x ([\d.]+) pts/.exec(info["Page size"] ?? "");
  assert.ok(match, `pdfinfo page size: ${info["Page size"]}`);
  return [Number(match[1]), Number(match[2])];
}

describe("templates over HTTP (full stack)", () => {
  let h: Harness;
  let key: string;
  let catalog: CatalogEntry[];
  const byId = (id: string) => catalog.find((t) => t.id === id)!;

  before(async () => {
    h = await startHarness();
    key = (await h.admin.createKey("business")).apiKey;
  });

  after(async () => {
    await h?.stop();
  });

  describe("GET /v1/templates", () => {
    it("is public and lists at least eight templates with their page or size, data schema and sample data", async () => {
      const response = await h.api.get("/v1/templates");
      assert.equal(response.status, 200, response.text);
      assert.match(response.headers["cache-control"] ?? "", /^public, max-age=\d+$/);
      assert.deepEqual(Object.keys(response.json), ["templates"]);
      catalog = response.json.templates;
      assert.ok(catalog.length >= 8, `${catalog.length} templates`);
      const ids = catalog.map((t) => t.id);
      assert.deepEqual(ids, [...ids].sort(), "sorted by id");
      for (const id of ["invoice", "receipt", "quote", "letter", "certificate", "report", "social-card", "og-image"])
        assert.ok(ids.includes(id), `${id} is in the catalog`);
      assert.ok(
        ids.some((id) => /cjk/.test(id)),
        "a template with CJK text",
      );
      for (const t of catalog) {
        assert.match(t.id, /^[a-z0-9][a-z0-9-]{0,63}$/);
        assert.ok(t.name && t.description.length > 20, `${t.id} has a name and a description`);
        assert.equal(t.preview_url, `/v1/templates/${t.id}/preview.png`);
        assert.equal(typeof t.data_schema, "object");
        assert.equal(typeof t.sample_data, "object");
        if (t.output === "pdf") {
          assert.ok(t.page && PAGE_POINTS[t.page.format], `${t.id}: page format ${t.page?.format}`);
          assert.equal(t.width, undefined);
        } else {
          assert.ok(Number.isInteger(t.width) && Number.isInteger(t.height), `${t.id}: width and height`);
          assert.equal(t.page, undefined);
        }
      }
      assert.ok(catalog.filter((t) => t.output === "png").length >= 2);
    });
  });

  describe("every built-in template renders its sample data", () => {
    it("PDF templates: a valid PDF of the declared page size, named after the template and the job", async () => {
      const pdfs = catalog.filter((t) => t.output === "pdf");
      const results = await Promise.all(
        pdfs.map(async (t) => ({ t, response: await h.api.post("/v1/render", { template_id: t.id, data: t.sample_data }, { key }) })),
      );
      for (const { t, response } of results) {
        assert.equal(response.status, 200, `${t.id}: ${response.text}`);
        assert.equal(response.json.content_type, "application/pdf");
        const download = await h.api.download(response.json.url);
        assert.equal(download.status, 200);
        assert.equal(download.headers["content-type"], "application/pdf");
        assert.equal(download.body.length, response.json.size_bytes);
        assert.match(download.headers["content-disposition"] ?? "", new RegExp(`^inline; filename="${t.id}-${response.json.id}\\.pdf"`));
        const info = pdfInfo(download.body);
        const pages = Number(info.Pages);
        assert.ok(pages >= 1, `${t.id}: ${pages} pages`);
        const [portraitW, portraitH] = PAGE_POINTS[t.page!.format]!;
        const [expectedW, expectedH] = t.page!.landscape ? [portraitH, portraitW] : [portraitW, portraitH];
        const [w, h2] = pageSize(info);
        assert.ok(
          Math.abs(w - expectedW) < 1.5 && Math.abs(h2 - expectedH) < 1.5,
          `${t.id}: page ${w} x ${h2} pts, expected ${t.page!.format}${t.page!.landscape ? " landscape" : ""}`,
        );
        assert.ok(pdfText(download.body).replace(/\s/g, "").length > 50, `${t.id} has text`);
      }
    });

    it("the report breaks its table across pages, repeating the header, with Page X of Y", async () => {
      const report = byId("report");
      const response = await h.api.post("/v1/render", { template_id: "report", data: report.sample_data }, { key });
      assert.equal(response.status, 200, response.text);
      const pdf = (await h.api.download(response.json.url)).body;
      const pages = Number(pdfInfo(pdf).Pages);
      assert.ok(pages >= 2, `the sample report spans ${pages} pages`);
      const texts = pdfText(pdf).split("\f").slice(0, pages);
      const firstColumn = (report.sample_data.columns as unknown[])[0];
      const label =
        typeof firstColumn === "string" ? firstColumn : String(Object.values(firstColumn as Record<string, unknown>).find((v) => typeof v === "string"));
      texts.forEach((text, i) => {
        assert.match(text, new RegExp(`Page\\s+${i + 1}\\s+of\\s+${pages}`), `page ${i + 1} footer`);
        assert.ok(text.toLowerCase().includes(label.toLowerCase()), `page ${i + 1} repeats the table header "${label}"`);
      });
    });

    it("PNG templates: a PNG of exactly the declared width and height, times the device scale factor", async () => {
      const pngs = catalog.filter((c) => c.output === "png");
      assert.ok(pngs.some((t) => t.device_scale_factor === 1) && pngs.some((t) => t.device_scale_factor === 2), "templates at 1× and at 2× (retina)");
      for (const t of pngs) {
        const response = await h.api.post("/v1/image", { template_id: t.id, data: t.sample_data }, { key });
        assert.equal(response.status, 200, `${t.id}: ${response.text}`);
        assert.equal(response.json.content_type, "image/png");
        const download = await h.api.download(response.json.url);
        assert.equal(download.headers["content-type"], "image/png");
        assert.match(download.headers["content-disposition"] ?? "", new RegExp(`^inline; filename="${t.id}-${response.json.id}\\.png"`));
        const factor = t.device_scale_factor!;
        assert.deepEqual(pngSize(download.body), { width: t.width! * factor, height: t.height! * factor }, t.id);
      }
    });

    it("GET /v1/jobs/<id> shows a finished sync job with its URL and history", async () => {
      const response = await h.api.post("/v1/render", { template_id: "letter", data: byId("letter").sample_data }, { key });
      assert.equal(response.status, 200, response.text);
      const job = await h.api.get(`/v1/jobs/${response.json.id}`, { key });
      assert.equal(job.status, 200);
      assert.equal(job.json.status, "succeeded");
      assert.equal(job.json.template_id, "letter");
      assert.equal(job.json.kind, "render");
      assert.equal(job.json.size_bytes, response.json.size_bytes);
      assert.equal(new URL(job.json.url).pathname, new URL(response.json.url).pathname);
      assert.deepEqual(
        job.json.events.map((e: { type: string }) => e.type),
        ["job.accepted", "job.started", "job.succeeded"],
      );
    });
  });

  describe("previews", () => {
    it("GET /v1/templates/<id>/preview.png is public, rendered with the sample data, sized like the output in CSS pixels", async () => {
      for (const t of catalog) {
        const response = await h.api.get(t.preview_url);
        assert.equal(response.status, 200, `${t.id}: ${response.text}`);
        assert.equal(response.headers["content-type"], "image/png");
        const size = pngSize(response.body);
        if (t.output === "png") assert.deepEqual(size, { width: t.width, height: t.height }, t.id);
        else {
          const [pw, ph] = PAGE_PIXELS[t.page!.format] ?? PAGE_PIXELS.A4!;
          assertPageSize(size, t.page!.landscape ? { width: ph, height: pw } : { width: pw, height: ph }, t.id);
        }
      }
    });

    it("is cached: the same bytes and ETag again, quickly, and 304 for If-None-Match", async () => {
      const first = await h.api.get("/v1/templates/invoice/preview.png");
      const started = Date.now();
      const second = await h.api.get("/v1/templates/invoice/preview.png");
      const took = Date.now() - started;
      assert.ok(second.body.equals(first.body));
      assert.ok(took < 1_000, `a cached preview took ${took} ms`);
      const etag = second.headers.etag!;
      assert.match(etag, /^"invoice-v\d+"$/);
      assert.match(second.headers["cache-control"] ?? "", /^public, max-age=\d+$/);
      const revalidated = await h.api.get("/v1/templates/invoice/preview.png", { headers: { "if-none-match": etag } });
      assert.equal(revalidated.status, 304);
      assert.equal(revalidated.body.length, 0);
      assert.equal(revalidated.headers.etag, etag);
      assert.equal((await h.api.get("/v1/templates/invoice/preview.png", { headers: { "if-none-match": '"invoice-v0"' } })).status, 200);
    });

    it("an unknown or invalid template id is 404 TEMPLATE_NOT_FOUND", async () => {
      for (const id of ["no-such-template", "INVALID", `a${"b".repeat(64)}`]) {
        expectError(await h.api.get(`/v1/templates/${id}/preview.png`), 404, "TEMPLATE_NOT_FOUND");
      }
    });
  });

  describe("checks that need the catalog", () => {
    it("a 64-character template_id passes validation and is 404 TEMPLATE_NOT_FOUND if it does not exist; 65 is 422", async () => {
      const id64 = `a${"b".repeat(63)}`;
      for (const path of ["/v1/render", "/v1/image"]) {
        const missing = await h.api.post(path, { template_id: id64, data: {} }, { key });
        assert.match(expectError(missing, 404, "TEMPLATE_NOT_FOUND"), new RegExp(`template "${id64}" does not exist`));
        assert.match(errorShape(missing).hint, /GET \/v1\/templates/);
        assert.equal(missing.headers["ratelimit-limit"], "1000");
        expectError(await h.api.post(path, { template_id: `${id64}b`, data: {} }, { key }), 422, "PAYLOAD_INVALID");
      }
    });

    it("data that fails the template's JSON Schema is 422 PAYLOAD_INVALID naming the path", async () => {
      const invoice = byId("invoice").sample_data as Record<string, unknown> & { items: Record<string, unknown>[] };
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ["/v1/render", { ...invoice, number: undefined }, /^data\.number: is required/],
        ["/v1/render", { ...invoice, currency: "usd" }, /^data\.currency: must match pattern/],
        ["/v1/render", { ...invoice, colour: "red" }, /^data\.colour: is not allowed by the template/],
        ["/v1/render", { ...invoice, items: [{ ...invoice.items[0], quantity: undefined }] }, /^data\.items\.0\.quantity: is required/],
        ["/v1/render", { ...invoice, items: [{ ...invoice.items[0], quantity: "two" }] }, /^data\.items\.0\.quantity: must be number/],
        ["/v1/render", { ...invoice, items: [] }, /^data\.items: must NOT have fewer than 1 items/],
        ["/v1/render", { ...invoice, issue_date: "21/11/2026" }, /^data\.issue_date: must match format "date"/],
        ["/v1/image", { ...byId("social-card").sample_data, title: 42 }, /^data\.title: must be string/],
      ];
      for (const [path, data, message] of cases) {
        const templateId = path === "/v1/image" ? "social-card" : "invoice";
        const response = await h.api.post(path, { template_id: templateId, data: JSON.parse(JSON.stringify(data)) }, { key });
        assert.match(expectError(response, 422, "PAYLOAD_INVALID"), message);
        assert.match(errorShape(response).hint, new RegExp(`data_schema of template "${templateId}"`));
      }
    });

    it("a template of the other kind is 422: PNG templates are for /v1/image, PDF ones for /v1/render", async () => {
      assert.match(
        expectError(await h.api.post("/v1/render", { template_id: "social-card", data: byId("social-card").sample_data }, { key }), 422, "PAYLOAD_INVALID"),
        /makes a PNG image/,
      );
      assert.match(
        expectError(await h.api.post("/v1/image", { template_id: "invoice", data: byId("invoice").sample_data }, { key }), 422, "PAYLOAD_INVALID"),
        /makes a PDF document/,
      );
    });

    it("the template is checked before the quota: a missing template or bad data with no quota left is 404 / 422", async () => {
      const free = await h.admin.createKey("free");
      await h.admin.setUsed(free.keyId, "free", 100);
      expectError(await h.api.post("/v1/render", { template_id: "no-such-template", data: {} }, { key: free.apiKey }), 404, "TEMPLATE_NOT_FOUND");
      expectError(await h.api.post("/v1/render", { template_id: "invoice", data: { colour: "red" } }, { key: free.apiKey }), 422, "PAYLOAD_INVALID");
      expectError(await h.api.post("/v1/render", { template_id: "invoice", data: byId("invoice").sample_data }, { key: free.apiKey }), 429, "QUOTA_EXCEEDED");
    });
  });

  describe("raw html", () => {
    it("is a Handlebars template, HTML-escaped by default", async () => {
      const response = await h.api.post(
        "/v1/render",
        { html: "<h1>Hello {{name}}</h1><p>{{#each items}}[{{this}}]{{/each}}</p>", data: { name: "<b>Ada</b> & co", items: ["x", "y"] } },
        { key },
      );
      assert.equal(response.status, 200, response.text);
      const text = pdfText((await h.api.download(response.json.url)).body);
      assert.match(text, /Hello <b>Ada<\/b> & co/);
      assert.match(text, /\[x\]\[y\]/);
      const info = pdfInfo((await h.api.download(response.json.url)).body);
      assert.ok(Math.abs(pageSize(info)[0] - 595.28) < 1.5, "raw html defaults to A4");
    });
  });

  endOfSuiteChecks(() => h);
});

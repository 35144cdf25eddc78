import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { call } from "@pressroom/platform";
import { DEMO_API_KEY } from "@pressroom/domain";
import { waitFor } from "@pressroom/stack";
import puppeteer, { type Browser, type HTTPResponse, type Page } from "puppeteer-core";
import { pdfText, pngSize } from "./test-support/pdf";
import { startHarness, type Harness } from "./test-support/harness";

/**
 * The pages a developer reads before integrating, used as a person would in
 * Chromium: the template gallery, a template's page with "Try it" (rendering
 * with the public demo key), and the API reference. Every page is checked to
 * load nothing from another origin and to break none of its
 * Content-Security-Policy.
 */

interface CatalogEntry {
  id: string;
  name: string;
  description: string;
  output: "pdf" | "png";
  width?: number;
  height?: number;
  device_scale_factor?: number;
  page?: { format: string; landscape: boolean };
  data_schema: { required?: string[] };
  sample_data: Record<string, unknown>;
}

interface Visit {
  page: Page;
  /** Every URL the page requested, in order. */
  requests: string[];
  /** Console messages about the Content-Security-Policy (a refused script, style, image, frame or connection). */
  violations: string[];
  /** Requests to anything but the gateway's own origin (data: URLs are not fetched from anywhere). */
  foreign(): string[];
}

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/lib/chromium/chromium-headless-shell";
/** Generous: previews and renders share two CPUs with other test runs. */
const SLOW = 180_000;

describe("the gallery, the template pages and the API reference in a browser", () => {
  let h: Harness;
  let browser: Browser;
  let origin: string;
  let catalog: CatalogEntry[];
  let demoKeyId: string;

  before(async () => {
    h = await startHarness();
    origin = new URL(h.stack.baseUrl).origin;
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: "shell",
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--no-first-run"],
    });
    catalog = (await h.api.get("/v1/templates")).json.templates;
    demoKeyId = (await call(h.admin.identity, h.admin.identity.getKey, { apiKey: DEMO_API_KEY, keyId: "" })).key!.keyId;
  });

  after(async () => {
    await browser?.close();
    await h?.stop();
  });

  async function visit(path: string, options: { javaScript?: boolean } = {}): Promise<Visit & { response: HTTPResponse }> {
    const page = await browser.newPage();
    page.setDefaultTimeout(SLOW);
    await page.setViewport({ width: 1280, height: 900 });
    await page.setJavaScriptEnabled(options.javaScript ?? true);
    const requests: string[] = [];
    const violations: string[] = [];
    page.on("request", (request) => requests.push(request.url()));
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    const response = await page.goto(`${origin}${path}`, { waitUntil: "load", timeout: SLOW });
    assert.ok(response, `${path} answered`);
    return { page, requests, violations, response, foreign: () => requests.filter((url) => !url.startsWith("data:") && new URL(url).origin !== origin) };
  }

  function assertOwnOriginOnly(visit: Visit): void {
    assert.ok(visit.requests.length > 1, "the page loaded its assets");
    assert.deepEqual(visit.foreign(), [], "requests to another origin");
    assert.deepEqual(visit.violations, [], "Content-Security-Policy violations");
  }

  /** The demo key allows one render at a time; its slot is freed by the previous job's terminal event, shortly after the answer. */
  async function demoSlotFree(): Promise<void> {
    await waitFor(
      "the demo key's render slot is free",
      async () => {
        const { usage } = await call(h.admin.metering, h.admin.metering.getUsage, { keyId: demoKeyId, plan: "demo" });
        return usage!.inFlight === 0;
      },
      SLOW,
    );
  }

  /** Replaces the data in the "Try it" field. */
  async function typeData(page: Page, data: unknown): Promise<void> {
    await page.$eval("#try-data", (field, text) => ((field as HTMLTextAreaElement).value = text), JSON.stringify(data, null, 2));
  }

  async function problems(page: Page): Promise<string> {
    await page.waitForSelector("#try-problems:not([hidden])");
    return page.$eval("#try-problems", (node) => (node as HTMLElement).innerText);
  }

  it("GET / shows every catalog template as a card: loaded preview, name, description, output and size; nothing from another origin", async () => {
    assert.equal(catalog.length, 10);
    const gallery = await visit("/");
    try {
      assert.equal(gallery.response.status(), 200);
      const headers = gallery.response.headers();
      assert.match(headers["content-type"] ?? "", /^text\/html; charset=utf-8/);
      const csp = headers["content-security-policy"] ?? "";
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /style-src 'self'(;|$)/);
      assert.ok(!/unsafe-inline|unsafe-eval|https?:/.test(csp), csp);
      const cards = await gallery.page.$$eval(".card", (nodes) =>
        nodes.map((card) => {
          const img = card.querySelector("img")!;
          return {
            name: card.querySelector("h2")!.textContent!.trim(),
            href: card.querySelector("h2 a")!.getAttribute("href"),
            text: (card as HTMLElement).innerText,
            image: { src: img.getAttribute("src"), alt: img.alt, complete: img.complete, naturalWidth: img.naturalWidth },
          };
        }),
      );
      assert.equal(cards.length, catalog.length);
      for (const [i, template] of catalog.entries()) {
        const card = cards[i]!;
        assert.equal(card.name, template.name);
        assert.equal(card.href, `/templates/${template.id}`);
        assert.ok(card.text.includes(template.description.slice(0, 40)), `${template.id}: description`);
        assert.match(card.text, new RegExp(`Output\\s*${template.output.toUpperCase()}`));
        const size =
          template.output === "png"
            ? `${template.width} × ${template.height} px`
            : `${template.page!.format} ${template.page!.landscape ? "landscape" : "portrait"}`;
        assert.ok(card.text.includes(size), `${template.id}: ${size} in ${card.text}`);
        assert.equal(card.image.src, `/templates/${template.id}/preview.png`);
        assert.ok(card.image.alt.includes(template.name));
        assert.ok(card.image.complete && card.image.naturalWidth > 0, `${template.id}: preview loaded`);
      }
      assertOwnOriginOnly(gallery);
    } finally {
      await gallery.page.close();
    }
  });

  it("is keyboard navigable: Tab reaches the skip link, the navigation (the console's link last) and a card; Enter on the card opens its template", async () => {
    const gallery = await visit("/");
    try {
      const focused: string[] = [];
      for (let i = 0; i < 7; i++) {
        await gallery.page.keyboard.press("Tab");
        focused.push(await gallery.page.evaluate(() => document.activeElement?.textContent?.trim() ?? ""));
      }
      assert.deepEqual(focused.slice(0, 6), ["Skip to content", "Pressroom", "Templates", "API reference", "OpenAPI document", "Console"]);
      assert.equal(focused[6], catalog[0]!.name);
      await Promise.all([gallery.page.waitForNavigation(), gallery.page.keyboard.press("Enter")]);
      assert.equal(gallery.page.url(), `${origin}/templates/${catalog[0]!.id}`);
    } finally {
      await gallery.page.close();
    }
  });

  it("reads without JavaScript: the cards, the data schema table, the sample data and the code snippets are in the HTML", async () => {
    const gallery = await visit("/", { javaScript: false });
    const detail = await visit("/templates/invoice", { javaScript: false });
    try {
      assert.equal(await gallery.page.$$eval(".card", (nodes) => nodes.length), catalog.length);
      const invoice = catalog.find((t) => t.id === "invoice")!;
      const fields = await detail.page.$$eval(".schema-table tbody th", (nodes) => nodes.map((node) => node.textContent));
      for (const name of invoice.data_schema.required!) assert.ok(fields.includes(name), `${name} in the schema table`);
      assert.ok(fields.includes("items[].quantity"), "nested array fields are listed");
      const numberRow = await detail.page.$eval(".schema-table tbody tr", (row) => (row as HTMLElement).innerText);
      assert.match(numberRow, /^number\s+string\s+yes\s+1 to 40 characters\s+Invoice number/);
      const sample = await detail.page.$eval("#try-data", (field) => (field as HTMLTextAreaElement).value);
      assert.deepEqual(JSON.parse(sample), invoice.sample_data);
      const code = await detail.page.$$eval(".snippets pre", (nodes) => nodes.map((node) => node.textContent ?? ""));
      assert.equal(code.length, 3);
      assert.ok(code[0]!.startsWith(`curl -s ${origin}/v1/render`), code[0]);
      assert.ok(code.every((snippet) => snippet.includes(DEMO_API_KEY) && snippet.includes('"invoice"')));
      assert.match(code[1]!, new RegExp(`new Pressroom\\(\\{ apiKey: "${DEMO_API_KEY}", baseUrl: "http://127\\.0\\.0\\.1:\\d+" \\}\\)`));
      assert.match(
        code[2]!,
        new RegExp(`client = Pressroom\\(api_key="${DEMO_API_KEY}", base_url="http://127\\.0\\.0\\.1:\\d+"\\)\\nresult = client\\.render\\(`),
      );
      assert.equal(await detail.page.$eval("#try-it button[type=submit]", (button) => (button as HTMLButtonElement).disabled), true, "Render needs the script");
    } finally {
      await gallery.page.close();
      await detail.page.close();
    }
  });

  it("a schema-invalid edit shows each field's error in the page and sends nothing", async () => {
    const detail = await visit("/templates/invoice");
    try {
      assertOwnOriginOnly(detail);
      const invoice = catalog.find((t) => t.id === "invoice")!;
      const { number: _number, ...withoutNumber } = invoice.sample_data;
      await detail.page.waitForSelector("#try-it button[type=submit]:not([disabled])");
      const before = detail.requests.length;
      await typeData(detail.page, { ...withoutNumber, currency: "usd", items: [{ description: "Work", quantity: "two", unit_price: 10 }] });
      await detail.page.click("#try-it button[type=submit]");
      const text = await problems(detail.page);
      assert.match(text, /nothing was sent/);
      assert.match(text, /data\.number: is required/);
      assert.match(text, /data\.currency: must match \^\[A-Z\]\{3\}\$/);
      assert.match(text, /data\.items\.0\.quantity: must be a number/);
      assert.equal(await detail.page.$eval("#try-data", (field) => field.getAttribute("aria-invalid")), "true");
      await typeData(detail.page, "not an object");
      await detail.page.click("#try-it button[type=submit]");
      assert.match(await problems(detail.page), /data: must be an object/);
      await detail.page.$eval("#try-data", (field) => ((field as HTMLTextAreaElement).value = "{ broken"));
      await detail.page.click("#try-it button[type=submit]");
      assert.match(await problems(detail.page), /The data is not valid JSON/);
      assert.deepEqual(detail.requests.slice(before), [], "no request left the page");
    } finally {
      await detail.page.close();
    }
  });

  it("Try it renders an edited PDF with the demo key and shows it in a frame, with its signed URL", async () => {
    await demoSlotFree();
    const detail = await visit("/templates/invoice");
    try {
      const invoice = catalog.find((t) => t.id === "invoice")!;
      await detail.page.waitForSelector("#try-it button[type=submit]:not([disabled])");
      await typeData(detail.page, { ...invoice.sample_data, number: "INV-GALLERY-0019" });
      const rendered = detail.page.waitForResponse((response) => response.url() === `${origin}/v1/render`, { timeout: SLOW });
      const output = detail.page.waitForResponse((response) => response.url().startsWith(`${origin}/v1/outputs/`), { timeout: SLOW });
      await detail.page.click("#try-it button[type=submit]");
      const answer = await rendered;
      assert.equal(answer.request().headers().authorization, `Bearer ${DEMO_API_KEY}`);
      assert.deepEqual(JSON.parse(answer.request().postData()!), { template_id: "invoice", data: { ...invoice.sample_data, number: "INV-GALLERY-0019" } });
      assert.equal(answer.status(), 200);
      const body = (await answer.json()) as { url: string; content_type: string };
      assert.equal(body.content_type, "application/pdf");
      assert.equal((await output).headers()["content-type"], "application/pdf");
      await detail.page.waitForSelector("#try-result:not([hidden]) iframe");
      const shown = await detail.page.$eval("#try-result", (node) => ({
        frame: node.querySelector("iframe")!.getAttribute("src"),
        link: node.querySelector("a.signed-url")!.getAttribute("href"),
        text: (node as HTMLElement).innerText,
      }));
      const signed = new URL(body.url);
      assert.equal(shown.frame, `${signed.pathname}${signed.search}`);
      assert.equal(shown.link, body.url);
      assert.ok(shown.text.includes(body.url));
      assert.match(shown.text, /application\/pdf, [\d.]+ KiB/);
      const pdf = await h.api.download(body.url);
      assert.equal(pdf.headers["content-type"], "application/pdf");
      assert.match(pdfText(pdf.body), /INV-GALLERY-0019/);
      assertOwnOriginOnly(detail);
    } finally {
      await detail.page.close();
    }
  });

  it("Try it renders an edited PNG template and shows the image inline at the template's size", async () => {
    await demoSlotFree();
    const card = catalog.find((t) => t.id === "social-card")!;
    const detail = await visit(`/templates/${card.id}`);
    try {
      await detail.page.waitForSelector("#try-it button[type=submit]:not([disabled])");
      await typeData(detail.page, { ...card.sample_data, title: "Seen in the gallery" });
      const rendered = detail.page.waitForResponse((response) => response.url() === `${origin}/v1/image`, { timeout: SLOW });
      const output = detail.page.waitForResponse((response) => response.url().startsWith(`${origin}/v1/outputs/`), { timeout: SLOW });
      await detail.page.click("#try-it button[type=submit]");
      assert.equal((await rendered).status(), 200);
      assert.equal((await output).headers()["content-type"], "image/png");
      const scale = card.device_scale_factor ?? 1;
      await detail.page.waitForFunction(() => {
        const img = document.querySelector<HTMLImageElement>("#try-result img");
        return img !== null && img.complete && img.naturalWidth > 0;
      });
      const image = await detail.page.$eval("#try-result img", (img) => ({
        width: (img as HTMLImageElement).naturalWidth,
        height: (img as HTMLImageElement).naturalHeight,
      }));
      assert.deepEqual(image, { width: card.width! * scale, height: card.height! * scale });
      const link = await detail.page.$eval("#try-result a.signed-url", (a) => a.getAttribute("href")!);
      const png = await h.api.download(link);
      assert.deepEqual(pngSize(png.body), image);
      assertOwnOriginOnly(detail);
    } finally {
      await detail.page.close();
    }
  });

  it("a 429 from the API is shown as the API's message with the wait from Retry-After", async () => {
    const detail = await visit("/templates/og-image");
    try {
      await detail.page.waitForSelector("#try-it button[type=submit]:not([disabled])");
      // Use up the demo key's 3 requests a minute, so that the window stays full for a while yet.
      await waitFor(
        "the demo key's minute is used up for at least 10 more seconds",
        async () => {
          const response = await h.api.get("/v1/keys/usage", { key: DEMO_API_KEY });
          return response.status === 429 && Number(response.headers["retry-after"]) >= 10;
        },
        SLOW,
        1_000,
      );
      const rendered = detail.page.waitForResponse((response) => response.url() === `${origin}/v1/image`, { timeout: SLOW });
      await detail.page.click("#try-it button[type=submit]");
      const answer = await rendered;
      assert.equal(answer.status(), 429);
      const body = (await answer.json()) as { error: string; code: string; hint: string };
      assert.equal(body.code, "RATE_LIMITED");
      const wait = Number(answer.headers()["retry-after"]);
      const text = await problems(detail.page);
      assert.ok(text.includes(`${body.error} — try again in ${wait} seconds.`), text);
      assert.ok(text.includes(body.hint), text);
      assert.equal(await detail.page.$eval("#try-result", (node) => (node as HTMLElement).hidden), true);
      assert.equal(await detail.page.$eval("#try-data", (field) => field.getAttribute("aria-invalid")), null, "a 429 is not the data's fault");
    } finally {
      await detail.page.close();
    }
  });

  it("GET /docs lists every path of the OpenAPI document, rendered from this origin only under the same strict policy", async () => {
    const openapi = (await h.api.get("/v1/openapi.json")).json as { paths: Record<string, Record<string, unknown>>; webhooks: Record<string, unknown> };
    const docs = await visit("/docs");
    try {
      const csp = docs.response.headers()["content-security-policy"] ?? "";
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /style-src 'self'(;|$)/);
      const expected = Object.entries(openapi.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
      await docs.page.waitForFunction((count) => document.querySelectorAll(".opblock").length >= count, {}, expected.length);
      const listed = await docs.page.$$eval(".opblock", (nodes) =>
        nodes.map((node) => ({
          operation: `${node.querySelector(".opblock-summary-method")!.textContent} ${node.querySelector(".opblock-summary-path")!.getAttribute("data-path")}`,
          webhook: node.closest(".webhooks-container") !== null,
        })),
      );
      assert.deepEqual(
        listed
          .filter((block) => !block.webhook)
          .map((block) => block.operation)
          .sort(),
        [...expected].sort(),
      );
      assert.deepEqual(
        listed.filter((block) => block.webhook).map((block) => block.operation),
        Object.keys(openapi.webhooks).map((name) => `POST ${name}`),
        "the webhook callback is described too",
      );
      assertOwnOriginOnly(docs);
    } finally {
      await docs.page.close();
    }
  });

  it("serves its assets compressed and cacheable, and answers an unknown template or asset with 404", async () => {
    const bundle = await h.api.get("/assets/swagger-ui/swagger-ui-bundle.js", { headers: { "accept-encoding": "gzip" } });
    assert.equal(bundle.status, 200);
    assert.equal(bundle.headers["content-encoding"], "gzip");
    assert.match(bundle.headers["content-type"] ?? "", /^text\/javascript/);
    const again = await h.api.get("/assets/swagger-ui/swagger-ui-bundle.js", { headers: { "accept-encoding": "gzip", "if-none-match": bundle.headers.etag! } });
    assert.equal(again.status, 304);
    const missing = await h.api.get("/templates/no-such-template");
    assert.equal(missing.status, 404);
    assert.match(missing.text, /No template called “no-such-template”/);
    const asset = await h.api.get("/assets/secrets.txt");
    assert.equal(asset.status, 404);
    assert.equal(asset.json.code, "NOT_FOUND");
  });
});

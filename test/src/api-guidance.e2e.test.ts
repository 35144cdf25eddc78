import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { DEMO_API_KEY } from "@pressroom/domain";
import { errorShape, type ApiResponse } from "./test-support/api";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { listen } from "./test-support/hostile";
import { pdfInfo, pdfText } from "./test-support/pdf";

/**
 * The answers a newcomer follows (issue 44): each refusal says what is true and points to a call that works,
 * against the whole running system: catalog ids are read-only, a missing version names those that exist,
 * `data` is optional where nothing needs it, Idempotency-Key compares bodies as JSON, a created template has
 * its Location.
 */

function expectError(response: ApiResponse, status: number, code: string): { error: string; code: string; hint: string } {
  assert.equal(response.status, status, `expected ${status} ${code}, got ${response.status} ${response.text}`);
  const body = errorShape(response);
  assert.equal(body.code, code, response.text);
  return body;
}

const letter = (html: string) => ({
  name: "Letter",
  output: "pdf",
  html,
  data_schema: { type: "object", properties: { who: { type: "string" } } },
  sample_data: { who: "Sample" },
});

describe("answers that lead the right way (full stack)", () => {
  let h: Harness;
  let key: string;
  let site: Awaited<ReturnType<typeof listen<http.Server>>>;
  let origin: string;

  before(async () => {
    site = await listen(
      http.createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://localhost");
        if (url.pathname === "/page") {
          res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
          res.end("<!doctype html><html lang=en><head><title>A page</title></head><body><p>A public page</p></body></html>");
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
    h = await startHarness({ serviceEnv: { render: { RENDER_ALLOW_LOOPBACK: "true", RENDER_SUBRESOURCE_PORTS: `80,443,${site.port}` } } });
    key = (await h.admin.createKey("business")).apiKey;
  });

  after(async () => {
    await h?.stop();
    await site?.close();
  });

  const render = (body: Record<string, unknown>) => h.api.post("/v1/render", body, { key });
  async function pdfOf(response: ApiResponse): Promise<Buffer> {
    assert.equal(response.status, 200, response.text);
    const download = await h.api.download(response.json.url);
    assert.equal(download.status, 200);
    return download.body;
  }

  describe("catalog ids and versions", () => {
    it("a catalog id is read-only: PUT and DELETE answer 403 TEMPLATE_READ_ONLY, and a create's 409 says to pick another id", async () => {
      const listed = await h.api.get("/v1/templates", { key });
      assert.ok(listed.json.templates.some((t: { id: string }) => t.id === "invoice"));

      const created = expectError(await h.api.post("/v1/templates", { id: "invoice", ...letter("<p>x</p>") }, { key }), 409, "TEMPLATE_EXISTS");
      assert.match(created.hint, /pick another id/i);
      assert.doesNotMatch(created.hint, /PUT/);

      const replaced = expectError(await h.api.request("PUT", "/v1/templates/invoice", { key, json: letter("<p>x</p>") }), 403, "TEMPLATE_READ_ONLY");
      assert.match(replaced.error, /public catalog/);
      assert.match(replaced.hint, /POST \/v1\/templates/);
      expectError(await h.api.request("DELETE", "/v1/templates/invoice", { key }), 403, "TEMPLATE_READ_ONLY");

      // An id that exists nowhere is still not found; the account's own is replaced and deleted as before.
      expectError(await h.api.request("PUT", "/v1/templates/no-such-thing", { key, json: letter("<p>x</p>") }), 404, "TEMPLATE_NOT_FOUND");
      expectError(await h.api.request("DELETE", "/v1/templates/no-such-thing", { key }), 404, "TEMPLATE_NOT_FOUND");
      assert.equal((await h.api.get("/v1/templates/invoice")).status, 200);
    });

    it("the account's own id again is 409 saying to pick another id or replace it with PUT; a create answers 201 with Location", async () => {
      const created = await h.api.post("/v1/templates", { id: "guide-letter", ...letter("<p>Dear {{who}}</p>") }, { key });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.headers.location, "/v1/templates/guide-letter");
      assert.equal((await h.api.get(created.headers.location!, { key })).json.id, "guide-letter");
      const again = expectError(await h.api.post("/v1/templates", { id: "guide-letter", ...letter("<p>x</p>") }, { key }), 409, "TEMPLATE_EXISTS");
      assert.match(again.hint, /pick another id/i);
      assert.match(again.hint, /PUT \/v1\/templates\/guide-letter/);
    });

    it("a version the template does not have is 404 TEMPLATE_VERSION_NOT_FOUND naming the versions it has and /versions", async () => {
      const versions = (await h.api.get("/v1/templates/invoice/versions")).json.versions as { version: number }[];
      const newest = versions[0]!.version;
      const read = expectError(await h.api.get("/v1/templates/invoice/versions/99"), 404, "TEMPLATE_VERSION_NOT_FOUND");
      assert.match(read.error, /no version 99/);
      assert.match(read.error, new RegExp(newest === 1 ? "only 1" : `1 to ${newest}`));
      assert.match(read.hint, /GET \/v1\/templates\/invoice\/versions/);

      const sample = (await h.api.get("/v1/templates/invoice")).json.sample_data;
      const render = expectError(
        await h.api.post("/v1/render", { template_id: "invoice", template_version: 9, data: sample }, { key }),
        404,
        "TEMPLATE_VERSION_NOT_FOUND",
      );
      assert.match(render.error, /no version 9/);
      assert.match(render.hint, /\/versions/);

      const own = expectError(
        await h.api.post("/v1/render", { template_id: "guide-letter", template_version: 3, data: {} }, { key }),
        404,
        "TEMPLATE_VERSION_NOT_FOUND",
      );
      assert.match(own.error, /its versions: only 1/);
      const part = expectError(
        await h.api.post("/v1/render", { documents: [{ html: "<p>a</p>" }, { template_id: "guide-letter", template_version: 2 }] }, { key }),
        404,
        "TEMPLATE_VERSION_NOT_FOUND",
      );
      assert.match(part.error, /^documents\[1\]: /);
      expectError(await h.api.get("/v1/templates/no-such-thing/versions/1"), 404, "TEMPLATE_NOT_FOUND");
    });
  });

  describe("data where nothing needs it", () => {
    it("documents' parts without their own data use the request's; a part's own data wins", async () => {
      const text = pdfText(
        await pdfOf(
          await render({
            data: { who: "Ada" },
            documents: [{ html: "<p>Part one for {{who}}</p>" }, { html: "<p>Part two for {{who}}</p>", data: { who: "Bo" } }, { template_id: "guide-letter" }],
          }),
        ),
      );
      assert.match(text, /Part one for Ada/);
      assert.match(text, /Part two for Bo/);
      assert.match(text, /Dear Ada/);
    });

    it("data is optional for a url and for documents (default {}), and still required with template_id or html", async () => {
      assert.match(pdfText(await pdfOf(await render({ url: `${origin}/page` }))), /A public page/);
      assert.equal(pdfInfo(await pdfOf(await render({ documents: [{ html: "<p>one</p>" }, { html: "<p>two</p>" }] })))["Pages"], "2");
      const image = await h.api.post("/v1/image", { url: `${origin}/page`, options: { width: 200, height: 100 } }, { key });
      assert.equal(image.status, 200, image.text);
      const html = expectError(await render({ html: "<p>x</p>" }), 422, "PAYLOAD_INVALID");
      assert.match(html.error, /^data: is required with html/);
      assert.match(html.hint, /"data": \{\}/);
      expectError(await render({ template_id: "guide-letter" }), 422, "PAYLOAD_INVALID");
      assert.match(
        expectError(await h.api.post("/v1/image", { template_id: "social-card" }, { key }), 422, "PAYLOAD_INVALID").error,
        /^data: is required with template_id/,
      );
    });
  });

  describe("failed renders name their job and fit their cause", () => {
    /** A sync render that failed as the document's own fault: 422 RENDER_FAILED naming its job, whose history says the same. */
    async function failed(body: Record<string, unknown>, message: RegExp, hint: RegExp): Promise<string> {
      const response = await render(body);
      const error = expectError(response, 422, "RENDER_FAILED");
      const jobId = response.headers["pressroom-job-id"];
      assert.match(jobId ?? "", /^job_[0-9a-z]{26}$/, "the answer names its job");
      assert.match(error.error, message);
      assert.match(error.hint, hint);
      assert.ok(error.hint.includes(`GET /v1/jobs/${jobId}`), error.hint);
      const job = await h.api.get(`/v1/jobs/${jobId}`, { key });
      assert.equal(job.status, 200, job.text);
      assert.equal(job.json.status, "failed");
      return error.hint;
    }

    it("every answer after admission carries Pressroom-Job-Id: a sync success, an accepted job, a failure", async () => {
      const ok = await render({ html: "<p>fine</p>", data: {} });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.headers["pressroom-job-id"], ok.json.id);
      const queued = await render({ html: "<p>later</p>", data: {}, webhook_url: "https://hooks.example.com/pressroom" });
      assert.equal(queued.status, 202, queued.text);
      assert.equal(queued.headers["pressroom-job-id"], queued.json.id);
      const refused = await render({ html: 42, data: {} });
      expectError(refused, 422, "PAYLOAD_INVALID");
      assert.equal(refused.headers["pressroom-job-id"], undefined, "a request refused before admission names no job");
    });

    it("a url's 404, a non-HTML answer and an unreachable host each get their own hint", async () => {
      const missing = await failed({ url: `${origin}/nothing` }, /answered HTTP 404/, /Check the url/);
      const json = await failed({ url: `${origin}/data.json` }, /not an HTML page/, /answers an HTML page/);
      const nowhere = await failed({ url: "http://127.0.0.1:1/page" }, /could not be rendered/, /host name exists/);
      assert.equal(new Set([missing, json, nowhere].map((hint) => hint.replace(/GET .*/, ""))).size, 3);
    });

    it("PDF/UA without <html lang> is refused naming it; with a language it renders", async () => {
      const page = (lang: string) => `<!doctype html><html${lang}><head><title>Report</title></head><body><h1>Report</h1></body></html>`;
      await failed({ html: page(""), data: {}, options: { pdfua: true } }, /<html lang>/, /<html lang="en">/);
      assert.equal((await render({ html: page(' lang="de"'), data: {}, options: { pdfua: true } })).status, 200);
    });

    it("page_ranges that select no page say which pages exist", async () => {
      const twoPages = '<p>one</p><p style="break-before: page">two</p>';
      await failed(
        { html: twoPages, data: {}, options: { page_ranges: "5-9" } },
        /page_ranges "5-9" selects no page: the document has 2 pages \(1-2\)/,
        /page_ranges/,
      );
      assert.equal(pdfInfo(await pdfOf(await render({ html: twoPages, data: {}, options: { page_ranges: "2-9" } })))["Pages"], "1");
    });
  });

  describe("wait_for", () => {
    it("an expression that is not JavaScript is refused before admission, naming the syntax error", async () => {
      const response = await render({ html: "<p>x</p>", data: {}, options: { wait_for: { expression: "window.ready ===" } } });
      const error = expectError(response, 422, "PAYLOAD_INVALID");
      assert.match(error.error, /^options\.wait_for\.expression: is not valid JavaScript \(SyntaxError: /);
      assert.equal(response.headers["pressroom-job-id"], undefined);
    });

    it("an expression that throws fails the job at once naming the error, not after the deadline", async () => {
      const response = await render({ html: "<p>x</p>", data: {}, options: { wait_for: { expression: "window.app.ready" } } });
      const error = expectError(response, 422, "RENDER_FAILED");
      assert.match(error.error, /wait_for expression "window\.app\.ready" threw TypeError: /);
      assert.doesNotMatch(error.error, /deadline/);
    });

    it("timeout_ms bounds the wait below the deadline, and the failure names it; it bounds no delay", async () => {
      const error = expectError(
        await render({ html: "<p>x</p>", data: {}, options: { wait_for: { selector: "#never", timeout_ms: 300 } } }),
        422,
        "RENDER_FAILED",
      );
      assert.match(error.error, /wait_for selector "#never" was not met within its wait_for\.timeout_ms \(300 ms\)/);
      const late = `<p id="t">early</p><script>setTimeout(() => { document.getElementById("t").textContent = "ready now"; window.ready = true; }, 200)</script>`;
      assert.match(
        pdfText(await pdfOf(await render({ html: late, data: {}, options: { wait_for: { expression: "window.ready", timeout_ms: 5_000 } } }))),
        /ready now/,
      );
      expectError(await render({ html: "<p>x</p>", data: {}, options: { wait_for: { delay_ms: 10, timeout_ms: 300 } } }), 422, "PAYLOAD_INVALID");
    });
  });

  describe("raw HTML's Handlebars is checked with the request", () => {
    it("a syntax error, an unknown helper or a partial is 422 PAYLOAD_INVALID with line and column, before admission (not charged)", async () => {
      const fresh = (await h.admin.createKey("free")).apiKey;
      const post = (body: Record<string, unknown>) => h.api.post("/v1/render", body, { key: fresh });
      const helper = expectError(await post({ html: "<p>\n  {{upper name}}</p>", data: { name: "x" } }), 422, "PAYLOAD_INVALID");
      assert.equal(helper.error, "html: does not compile at line 2, column 3: unknown helper upper");
      assert.match(helper.hint, /money, date, add and multiply/);
      const syntax = expectError(await post({ html: "<p>{{name}</p>", data: {} }), 422, "PAYLOAD_INVALID");
      assert.match(syntax.error, /^html: does not compile at line 1, column \d+: /);
      const partial = expectError(await post({ documents: [{ html: "<p>a</p>" }, { html: "{{> header}}" }] }), 422, "PAYLOAD_INVALID");
      assert.match(partial.error, /^documents\[1\]\.html: does not compile at line 1, column 1: partials/);
      const batch = expectError(
        await h.api.post(
          "/v1/batches",
          {
            items: [
              { html: "<p>a</p>", data: {} },
              { html: "<p>{{#if a}}</p>", data: {} },
            ],
          },
          { key: fresh },
        ),
        422,
        "PAYLOAD_INVALID",
      );
      assert.match(batch.error, /^items\[1\]\.html: does not compile at line 1, column \d+: /);
      const usage = await h.api.get("/v1/keys/usage", { key: fresh });
      assert.equal(usage.json.renders.used, 0, "nothing was charged");
      const fine = await post({ html: "<p>{{money total}} {{#each items}}{{this}}{{/each}}</p>", data: { total: 3, items: ["a"] } });
      assert.equal(fine.status, 200, fine.text);
    });

    it("a crafted source that takes Handlebars' parser seconds holds no other request: the gateway answers them while it is checked", async () => {
      const fresh = (await h.admin.createKey("free")).apiKey;
      // An unknown helper first, then 100,000 mustaches the parser reads before the helper is reported.
      const crafted = h.api.post("/v1/render", { html: `{{upper x}}${"{{a}}".repeat(100_000)}`, data: {}, async: true }, { key: fresh });
      const order: string[] = [];
      let pending = true;
      const settled = crafted.then((response) => {
        pending = false;
        order.push("crafted");
        return response;
      });
      while (pending) {
        const live = await h.api.get("/livez");
        assert.equal(live.status, 200);
        if (pending) order.push("livez");
      }
      const response = await settled;
      // Checked within the budget: refused; past it (a loaded machine): admitted, the renderer checks it.
      assert.ok(response.status === 422 || response.status === 202, response.text);
      if (response.status === 422) assert.match(response.json.error, /^html: does not compile at line 1, column 1: unknown helper upper/);
      const answeredMeanwhile = order.indexOf("crafted");
      assert.ok(answeredMeanwhile >= 3, `other requests were answered while the crafted one was checked: ${order.join(", ")}`);
    });
  });

  describe("messages in words a reader can act on", () => {
    it("a missing field says it is required; an object given as something else shows its shape", async () => {
      const missing = expectError(await h.api.post("/v1/templates", { id: "guide-missing", output: "pdf", html: "<p>x</p>" }, { key }), 422, "PAYLOAD_INVALID");
      assert.equal(missing.error, "name: is required");
      const margin = expectError(await render({ html: "<p>x</p>", data: {}, options: { margin: "1cm" } }), 422, "PAYLOAD_INVALID");
      assert.match(margin.error, /^options\.margin: must be an object such as \{"top": "20mm", "right": "20mm", "bottom": "20mm", "left": "20mm"\}/);
      assert.doesNotMatch(margin.error, /Invalid input/);
    });

    it("an asset's name rule is given in words; a footer on an own template points to options.footer_html", async () => {
      const asset = expectError(
        await h.api.post("/v1/templates", { id: "guide-asset", ...letter("<p>x</p>"), assets: { "../logo.png": "AAAA" } }, { key }),
        422,
        "PAYLOAD_INVALID",
      );
      assert.match(asset.error, /letters, digits, dots, underscores or hyphens/);
      const footer = expectError(
        await h.api.post("/v1/templates", { id: "guide-footer", ...letter("<p>x</p>"), page: { footer: true } }, { key }),
        422,
        "PAYLOAD_INVALID",
      );
      assert.match(footer.error, /options\.footer_html/);
    });

    it("a merged document's part is named once; the html size hint does not suggest templates", async () => {
      const part = expectError(await render({ documents: [{ html: "<p>a</p>" }, { template_id: "social-card" }], data: {} }), 422, "PAYLOAD_INVALID");
      assert.match(part.error, /^documents\[1\]\.template_id: /);
      assert.doesNotMatch(part.error, /documents\[1\]: documents\[1\]/);
      const big = expectError(await render({ html: "a".repeat(524_289), data: {} }), 422, "PAYLOAD_INVALID");
      assert.doesNotMatch(big.hint, /store it as a template/, "a template would not help: its html has the same limit");
      assert.match(big.hint, /same limit/);
    });

    it("the demo key's limits point to signup, never to a checkout it cannot use", async () => {
      let limited: ApiResponse | undefined;
      for (let i = 0; i < 6 && !limited; i++) {
        const response = await h.api.get("/v1/keys/usage", { key: DEMO_API_KEY });
        if (response.status === 429) limited = response;
      }
      assert.ok(limited, "the demo key's rate limit was reached");
      const error = expectError(limited, 429, "RATE_LIMITED");
      assert.match(error.hint, /POST \/v1\/signup/);
      assert.doesNotMatch(error.hint, /checkout/);
    });
  });

  describe("webhooks say why an attempt failed", () => {
    it("a webhook_url on a private or loopback address is refused with the request, naming webhook_url and the address", async () => {
      for (const [hook, why] of [
        ["https://127.0.0.1/guide-hook", /host "127\.0\.0\.1" is a loopback address/],
        ["https://10.20.30.40/guide-hook", /host "10\.20\.30\.40" is a private address/],
        ["https://localhost/guide-hook", /host "localhost" resolves to a loopback address/],
      ] as const) {
        const refused = expectError(await render({ html: "<p>x</p>", data: {}, webhook_url: hook }), 422, "PAYLOAD_INVALID");
        assert.match(refused.error, /^webhook_url: /);
        assert.match(refused.error, why);
      }
    });

    it("the job's webhook shows the last attempt's reason (here a host that does not resolve), never the URL", async () => {
      const hook = "https://hooks.pressroom-guide.invalid/guide-hook?token=guide-secret-token";
      const accepted = await render({ html: "<p>x</p>", data: {}, webhook_url: hook });
      assert.equal(accepted.status, 202, accepted.text);
      let job: ApiResponse | undefined;
      for (let i = 0; i < 300; i++) {
        job = await h.api.get(`/v1/jobs/${accepted.json.id}`, { key });
        if (job.json.webhook?.attempts >= 1) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const webhook = job!.json.webhook;
      assert.ok(webhook.attempts >= 1, job!.text);
      assert.equal(webhook.last_status, 0);
      assert.match(webhook.last_error, /hooks\.pressroom-guide\.invalid|DNS|resolve/i);
      assert.ok(!job!.text.includes("guide-secret-token"), "the URL's query never reaches the job");
    });
  });

  describe("Idempotency-Key", () => {
    it("compares the body as JSON: the same fields in another order and spacing replay; another value is 422 IDEMPOTENCY_KEY_REUSED", async () => {
      const idem = { "idempotency-key": `guide-${Date.now()}` };
      const first = await h.api.request("POST", "/v1/render", {
        key,
        headers: { ...idem, "content-type": "application/json" },
        body: '{"html":"<p>{{a}} {{b}}</p>","data":{"a":"one","b":"two"}}',
      });
      assert.equal(first.status, 200, first.text);
      const reordered = await h.api.request("POST", "/v1/render", {
        key,
        headers: { ...idem, "content-type": "application/json" },
        body: '{\n  "data": { "b": "two", "a": "one" },\n  "html": "<p>{{a}} {{b}}</p>"\n}',
      });
      assert.equal(reordered.status, 200, reordered.text);
      assert.equal(reordered.headers["idempotent-replayed"], "true");
      assert.equal(reordered.json.id, first.json.id);
      const other = await h.api.request("POST", "/v1/render", {
        key,
        headers: { ...idem, "content-type": "application/json" },
        body: '{"data":{"b":"two","a":"three"},"html":"<p>{{a}} {{b}}</p>"}',
      });
      expectError(other, 422, "IDEMPOTENCY_KEY_REUSED");
    });
  });

  endOfSuiteChecks(() => h);
});

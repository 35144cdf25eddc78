import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { provisionNats } from "@pressroom/stack";
import { connect } from "nats";
import { errorShape, rawHttp, type ApiResponse } from "./test-support/api";
import { OpenApiChecker } from "./test-support/openapi";
import { WITHOUT_RENDER, endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";

/**
 * Errors, the check order and the request validation of the public API,
 * over HTTP against the running services. No render pool: accepted jobs stay
 * queued (holding their concurrency slot), which makes the concurrency and
 * quota checks deterministic; template lookups are in api-templates.
 */

const MAX_BODY_BYTES = 2 * 1024 * 1024;
const WEBHOOK = "https://hooks.example.com/pressroom";

/** Asserts status, code and the exact three-field JSON shape; returns the message. */
function expectError(response: ApiResponse, status: number, code: string): string {
  const body = errorShape(response);
  assert.equal(response.status, status, `expected ${status} ${code}, got ${response.status} ${response.text}`);
  assert.equal(body.code, code, response.text);
  assert.match(response.headers["content-type"] ?? "", /^application\/json; charset=utf-8$/);
  assert.equal(response.headers["cache-control"], "no-store");
  return body.error;
}

function expectRateHeaders(response: ApiResponse, limit: number): void {
  assert.equal(response.headers["ratelimit-limit"], String(limit), "RateLimit-Limit");
  assert.match(response.headers["ratelimit-remaining"] ?? "", /^\d+$/);
  assert.match(response.headers["ratelimit-reset"] ?? "", /^\d+$/);
}

describe("errors, check order and validation over HTTP", () => {
  let h: Harness;
  /** A business key for validation probes (1,000 requests a minute). */
  let key: string;

  before(async () => {
    h = await startHarness({ only: WITHOUT_RENDER });
    key = (await h.admin.createKey("business")).apiKey;
  });

  after(async () => {
    await h?.stop();
  });

  describe("every error, from every path, is JSON with exactly error, code and hint", () => {
    it("unknown routes are 404 NOT_FOUND", async () => {
      for (const path of ["/v1", "/v2/render", "/v1/render/extra", "/v1/templates/invoice/preview.jpg", "/v1/outputs", "/%E0%A4%A"]) {
        expectError(await h.api.get(path), 404, "NOT_FOUND");
      }
      expectError(await h.api.request("DELETE", "/no/such/path"), 404, "NOT_FOUND");
    });

    it("a known path with another method is 405 METHOD_NOT_ALLOWED with Allow; OPTIONS lists it", async () => {
      const cases: [string, string, string][] = [
        ["GET", "/v1/render", "POST, OPTIONS"],
        ["PUT", "/v1/image", "POST, OPTIONS"],
        ["DELETE", "/v1/templates", "HEAD, GET, POST, OPTIONS"],
        ["POST", "/v1/keys/usage", "HEAD, GET, OPTIONS"],
        ["PATCH", "/v1/jobs/job_00000000000000000000000000", "HEAD, GET, OPTIONS"],
        ["POST", "/v1/outputs/out_abc", "HEAD, GET, DELETE, OPTIONS"],
        ["GET", "/v1/signup", "POST, OPTIONS"],
        ["PROPFIND", "/v1/billing/checkout", "POST, OPTIONS"],
      ];
      for (const [method, path, allow] of cases) {
        const response = await h.api.request(method, path, { key });
        assert.match(expectError(response, 405, "METHOD_NOT_ALLOWED"), /method not allowed/);
        assert.equal(response.headers.allow, allow, `${method} ${path}`);
      }
      const options = await h.api.request("OPTIONS", "/v1/render");
      assert.equal(options.status, 204);
      assert.equal(options.headers.allow, "POST, OPTIONS");
    });

    it("a request the HTTP parser cannot read is 422 PAYLOAD_INVALID in the same shape", async () => {
      const checker = await OpenApiChecker.fetch(h.stack.baseUrl);
      for (const payload of [
        "GARBAGE\r\n\r\n",
        "GET /v1/templates HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
        "BREW /v1/render HTTP/1.1\r\nHost: x\r\n\r\n",
      ]) {
        const response = await rawHttp(h.stack.ports.http, payload);
        assert.equal(response.status, 422, JSON.stringify(payload));
        assert.match(response.headers["content-type"] ?? "", /^application\/json/);
        const body = JSON.parse(response.body) as Record<string, unknown>;
        assert.deepEqual(Object.keys(body).sort(), ["code", "error", "hint"]);
        assert.equal(body.code, "PAYLOAD_INVALID");
        assert.deepEqual(checker.validateSchema("Error", body), []);
      }
    });

    it("malformed JSON, a wrong or missing content type, and a body that is not an object are 422 PAYLOAD_INVALID", async () => {
      const post = (body: string, contentType?: string) =>
        h.api.request("POST", "/v1/render", { key, body, headers: contentType ? { "content-type": contentType } : {} });
      assert.match(expectError(await post('{"html": "<p>x</p>", "data": {', "application/json"), 422, "PAYLOAD_INVALID"), /not valid JSON/);
      assert.match(expectError(await post("", "application/json"), 422, "PAYLOAD_INVALID"), /not valid JSON/);
      assert.match(expectError(await post('{"html":"x","data":{}}', "text/plain"), 422, "PAYLOAD_INVALID"), /Content-Type: application\/json.*text\/plain/);
      assert.match(expectError(await post('{"html":"x","data":{}}', "application/x-www-form-urlencoded"), 422, "PAYLOAD_INVALID"), /must be JSON/);
      assert.match(expectError(await post('{"html":"x","data":{}}'), 422, "PAYLOAD_INVALID"), /got "none"/);
      for (const body of ["[]", '"text"', "42", "null"]) {
        assert.match(expectError(await post(body, "application/json"), 422, "PAYLOAD_INVALID"), /must be a JSON object/, body);
      }
      // charset parameters are fine
      const ok = await post(JSON.stringify({ html: "<p>x</p>", data: {}, webhook_url: WEBHOOK }), "application/json; charset=utf-8");
      assert.equal(ok.status, 202, ok.text);
      // the same holds on the other JSON endpoints
      assert.match(
        expectError(await h.api.request("POST", "/v1/signup", { body: "{", headers: { "content-type": "application/json" } }), 422, "PAYLOAD_INVALID"),
        /not valid JSON/,
      );
      assert.match(
        expectError(
          await h.api.request("POST", "/v1/billing/checkout", { key, body: "plan=pro", headers: { "content-type": "application/x-www-form-urlencoded" } }),
          422,
          "PAYLOAD_INVALID",
        ),
        /must be JSON/,
      );
    });

    it(`a body over MAX_BODY_BYTES (${MAX_BODY_BYTES}) is 422 PAYLOAD_INVALID, whether declared or streamed; exactly the limit is read`, async () => {
      const fresh = (await h.admin.createKey("business")).apiKey;
      const json = JSON.stringify({ html: "<p>padded</p>", data: {}, webhook_url: WEBHOOK });
      const exactly = Buffer.from(json + " ".repeat(MAX_BODY_BYTES - json.length));
      assert.equal(exactly.length, MAX_BODY_BYTES);
      const accepted = await h.api.request("POST", "/v1/render", { key: fresh, body: exactly, headers: { "content-type": "application/json" } });
      assert.equal(accepted.status, 202, accepted.text);

      const over = Buffer.concat([exactly, Buffer.from(" ")]);
      const declared = await h.api.request("POST", "/v1/render", { key: fresh, body: over, headers: { "content-type": "application/json" } });
      assert.match(expectError(declared, 422, "PAYLOAD_INVALID"), /larger than 2097152 bytes/);
      assert.equal(declared.headers.connection, "close", "the rest of an oversized body is not read");

      async function* chunked() {
        for (let i = 0; i < 40; i++) yield Buffer.alloc(64 * 1024, 0x20);
      }
      const streamed = await h.api.request("POST", "/v1/render", { key: fresh, body: chunked(), headers: { "content-type": "application/json" } });
      assert.match(expectError(streamed, 422, "PAYLOAD_INVALID"), /larger than 2097152 bytes/);
    });
  });

  describe("authentication", () => {
    const keyed: [string, string, unknown?][] = [
      ["POST", "/v1/render", { html: "<p>x</p>", data: {} }],
      ["POST", "/v1/image", { template_id: "social-card", data: {} }],
      ["GET", "/v1/keys/usage"],
      ["GET", "/v1/keys/webhook-secret"],
      ["POST", "/v1/billing/checkout", { plan: "pro" }],
      ["GET", "/v1/jobs/job_00000000000000000000000000"],
    ];

    it("a missing, malformed or unknown key is 401 AUTH_INVALID with WWW-Authenticate on every keyed endpoint", async () => {
      const variants: Record<string, string>[] = [
        {},
        { authorization: "" },
        { authorization: "Bearer" },
        { authorization: `Basic ${Buffer.from("user:pass").toString("base64")}` },
        { authorization: `Bearer ${key} extra` },
        { authorization: "Bearer not-a-key" },
        { authorization: "Bearer pr_live_ThisKeyDoesNotExist0000000000000" },
        { authorization: `Bearer ${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}` },
      ];
      for (const [method, path, json] of keyed) {
        for (const headers of variants) {
          const response = await h.api.request(method, path, { json, headers });
          assert.match(expectError(response, 401, "AUTH_INVALID"), /API key/, `${method} ${path} ${JSON.stringify(headers)}`);
          assert.equal(response.headers["www-authenticate"], 'Bearer realm="pressroom"');
          assert.equal(response.headers["ratelimit-limit"], undefined, "no rate headers before the key is known");
        }
      }
      // the scheme name is case-insensitive
      assert.equal((await h.api.get("/v1/keys/usage", { headers: { authorization: `bearer ${key}` } })).status, 200);
    });

    it("public endpoints need no key", async () => {
      assert.equal((await h.api.get("/v1/openapi.json")).status, 200);
      assert.equal((await h.api.get("/livez")).status, 200);
    });
  });

  describe("check order: auth → rate limit → body → template → quota → concurrency", () => {
    it("a bad body with a bad key is 401, on every keyed endpoint with a body", async () => {
      for (const path of ["/v1/render", "/v1/image", "/v1/billing/checkout"]) {
        const malformed = await h.api.request("POST", path, {
          key: "pr_live_nope0000000000000000000000",
          body: "{bad",
          headers: { "content-type": "text/plain" },
        });
        expectError(malformed, 401, "AUTH_INVALID");
        expectError(await h.api.post(path, { colour: "red" }), 401, "AUTH_INVALID");
      }
    });

    it("a bad body, a missing template or an exhausted quota while rate-limited is 429 RATE_LIMITED", async () => {
      const demo = await h.admin.createKey("demo");
      for (let i = 0; i < 3; i++) expectRateHeaders(await h.api.get("/v1/keys/usage", { key: demo.apiKey }), 3);
      await h.admin.setUsed(demo.keyId, "demo", 50);
      const probes: [string, unknown][] = [
        ["/v1/render", { html: "<p>x</p>", data: "not an object", colour: 1 }],
        ["/v1/render", { template_id: "no-such-template", data: {} }],
        ["/v1/image", { template_id: "INVALID", data: {} }],
        ["/v1/render", { html: "<p>fine</p>", data: {} }],
        ["/v1/billing/checkout", { plan: "gold" }],
      ];
      for (const [path, json] of probes) {
        const response = await h.api.post(path, json, { key: demo.apiKey });
        expectError(response, 429, "RATE_LIMITED");
        assert.equal(response.headers["ratelimit-remaining"], "0");
        assert.ok(Number(response.headers["retry-after"]) >= 1 && Number(response.headers["retry-after"]) <= 60, response.headers["retry-after"]);
      }
      const malformed = await h.api.request("POST", "/v1/render", { key: demo.apiKey, body: "{", headers: { "content-type": "application/json" } });
      expectError(malformed, 429, "RATE_LIMITED");
      expectError(await h.api.get("/v1/keys/usage", { key: demo.apiKey }), 429, "RATE_LIMITED");
      expectError(await h.api.get("/v1/jobs/job_00000000000000000000000000", { key: demo.apiKey }), 429, "RATE_LIMITED");
    });

    it("a missing template with a bad body is 422 (the body is checked first)", async () => {
      for (const json of [
        { template_id: "no-such-template", data: "not an object" },
        { template_id: "no-such-template", data: {}, colour: "red" },
        { template_id: "no-such-template", data: {}, webhook_url: "http://insecure.example.com" },
      ]) {
        expectError(await h.api.post("/v1/render", json, { key }), 422, "PAYLOAD_INVALID");
      }
      expectError(await h.api.post("/v1/image", { template_id: "no-such-template", data: [] }, { key }), 422, "PAYLOAD_INVALID");
    });

    it("an exhausted quota is 429 QUOTA_EXCEEDED, after the body", async () => {
      const free = await h.admin.createKey("free");
      await h.admin.setUsed(free.keyId, "free", 100);
      expectError(await h.api.post("/v1/render", { html: "<p>x</p>", data: 5 }, { key: free.apiKey }), 422, "PAYLOAD_INVALID");
      const refused = await h.api.post("/v1/render", { html: "<p>x</p>", data: {} }, { key: free.apiKey });
      assert.match(expectError(refused, 429, "QUOTA_EXCEEDED"), /quota/);
      assert.ok(Number(refused.headers["retry-after"]) >= 1);
      expectRateHeaders(refused, 10);
      const usage = await h.api.get("/v1/keys/usage", { key: free.apiKey });
      assert.deepEqual(usage.json.renders, { used: 100, limit: 100, remaining: 0 });
      // Refusals take nothing: one unit freed, one render accepted.
      await h.admin.setUsed(free.keyId, "free", 99);
      assert.equal((await h.api.post("/v1/render", { html: "<p>x</p>", data: {}, webhook_url: WEBHOOK }, { key: free.apiKey })).status, 202);
    });

    it("renders in flight over the plan's limit are 429 CONCURRENCY_EXCEEDED, after the body and the quota", async () => {
      const free = await h.admin.createKey("free");
      const first = await h.api.post("/v1/render", { html: "<p>held</p>", data: {}, webhook_url: WEBHOOK }, { key: free.apiKey });
      assert.equal(first.status, 202, first.text);
      const second = await h.api.post("/v1/render", { html: "<p>x</p>", data: {} }, { key: free.apiKey });
      assert.match(expectError(second, 429, "CONCURRENCY_EXCEEDED"), /in flight/);
      assert.ok(Number(second.headers["retry-after"]) >= 1);
      expectError(await h.api.post("/v1/render", { html: "<p>x</p>", data: {}, colour: 1 }, { key: free.apiKey }), 422, "PAYLOAD_INVALID");
      const usage = await h.api.get("/v1/keys/usage", { key: free.apiKey });
      assert.deepEqual(usage.json.concurrency, { limit: 1, in_flight: 1 });
      await h.admin.setUsed(free.keyId, "free", 100);
      expectError(await h.api.post("/v1/render", { html: "<p>x</p>", data: {} }, { key: free.apiKey }), 429, "QUOTA_EXCEEDED");
    });
  });

  describe("validation of POST /v1/render and /v1/image, both sides of every boundary", () => {
    /** Every accepting probe gets its own key: accepted jobs stay queued and hold a slot. */
    async function accepted(path: string, json: Record<string, unknown>): Promise<ApiResponse> {
      const fresh = (await h.admin.createKey("business")).apiKey;
      const response = await h.api.post(path, { webhook_url: WEBHOOK, ...json }, { key: fresh });
      assert.equal(response.status, 202, `${path} ${response.text}`);
      assert.deepEqual(Object.keys(response.json).sort(), ["id", "status"]);
      assert.equal(response.json.status, "queued");
      assert.equal(response.headers.location, `/v1/jobs/${response.json.id}`);
      expectRateHeaders(response, 1000);
      return response;
    }

    async function rejected(path: string, json: unknown, message: RegExp): Promise<void> {
      const response = await h.api.post(path, json, { key });
      assert.match(expectError(response, 422, "PAYLOAD_INVALID"), message, JSON.stringify(json).slice(0, 200));
      expectRateHeaders(response, 1000);
    }

    it("html: 524,288 UTF-8 bytes are accepted, 524,289 rejected naming html (ASCII and multi-byte)", async () => {
      await accepted("/v1/render", { html: "a".repeat(524_288), data: {} });
      await rejected("/v1/render", { html: "a".repeat(524_289), data: {} }, /^html: 524289 bytes is over the limit of 524288 bytes/);
      await accepted("/v1/render", { html: "é".repeat(262_144), data: {} });
      await rejected("/v1/render", { html: `${"é".repeat(262_144)}a`, data: {} }, /^html: 524289 bytes/);
      await rejected("/v1/render", { html: "€".repeat(174_763), data: {} }, /^html: 524289 bytes/);
      await rejected("/v1/render", { html: 42, data: {} }, /^html: must be a string/);
      await rejected("/v1/render", { html: "   ", data: {} }, /^html: must not be empty/);
    });

    it("template_id: the pattern ^[a-z0-9][a-z0-9-]{0,63}$; 65 characters rejected naming template_id", async () => {
      for (const bad of [`a${"b".repeat(64)}`, "Invoice", "-invoice", "in voice", "invoice_2", "", "ünïcode", "../etc/passwd"]) {
        await rejected("/v1/render", { template_id: bad, data: {} }, /^template_id: must match \^\[a-z0-9\]\[a-z0-9-\]\{0,63\}\$/);
        await rejected("/v1/image", { template_id: bad, data: {} }, /^template_id: must match/);
      }
      await rejected("/v1/render", { template_id: 7, data: {} }, /^template_id: must match/);
      // (64 characters pass validation and then need the catalog: see api-templates, 404 TEMPLATE_NOT_FOUND.)
    });

    it("exactly one of template_id, html or url; image takes template_id or url and has no html", async () => {
      await rejected("/v1/render", { data: {} }, /exactly one of template_id, html, url/);
      await rejected("/v1/render", { template_id: "invoice", html: "<p>x</p>", data: {} }, /exactly one of template_id, html, url/);
      await rejected("/v1/image", { data: {} }, /exactly one of template_id, url/);
      await rejected("/v1/image", { template_id: "social-card", html: "<p>x</p>", data: {} }, /^unknown field: html/);
    });

    it("unknown top-level fields are rejected, naming them", async () => {
      await rejected("/v1/render", { html: "<p>x</p>", data: {}, colour: "red" }, /^unknown field: colour/);
      await rejected("/v1/render", { html: "<p>x</p>", data: {}, colour: "red", format: "A3" }, /^unknown fields: colour, format/);
      await rejected("/v1/image", { template_id: "social-card", data: {}, width: 10 }, /^unknown field: width/);
    });

    it("data: required, a JSON object, at most 262,144 bytes", async () => {
      await rejected("/v1/render", { html: "<p>x</p>" }, /^data: is required with html/);
      for (const data of [null, [], "text", 3, true]) await rejected("/v1/render", { html: "<p>x</p>", data }, /^data: must be a JSON object/);
      await rejected("/v1/image", { template_id: "social-card", data: [] }, /^data: must be a JSON object/);
      const filler = (n: number) => ({ s: "x".repeat(n - '{"s":""}'.length) });
      await accepted("/v1/render", { html: "<p>x</p>", data: filler(262_144) });
      await rejected("/v1/render", { html: "<p>x</p>", data: filler(262_145) }, /^data: must be at most 262144 bytes/);
    });

    it("data nested 60,000 levels deep is 422 PAYLOAD_INVALID naming the limit of 64, and counts toward the rate", async () => {
      const nested = (levels: number) => `{"html":"<p>x</p>","webhook_url":"${WEBHOOK}","data":${'{"a":'.repeat(levels - 1)}1${"}".repeat(levels - 1)}}`;
      const fresh = (await h.admin.createKey("business")).apiKey;
      for (const [path, levels] of [
        ["/v1/render", 60_000],
        ["/v1/render", 65],
        ["/v1/image", 60_000],
        ["/v1/billing/checkout", 65],
      ] as const) {
        const first = await h.api.request("POST", path, { key: fresh, body: nested(levels), headers: { "content-type": "application/json" } });
        assert.match(expectError(first, 422, "PAYLOAD_INVALID"), /deeper than 64 levels/, `${path} at ${levels} levels`);
        expectRateHeaders(first, 1000);
      }
      const usage = await h.api.get("/v1/keys/usage", { key: fresh });
      assert.equal(usage.headers["ratelimit-remaining"], String(1000 - 5), "the four refused requests and this one were counted");
      const atLimit = await h.api.request("POST", "/v1/render", { key: fresh, body: nested(64), headers: { "content-type": "application/json" } });
      assert.equal(atLimit.status, 202, atLimit.text);
    });

    it("webhook_url: absolute https, port absent or 443, no user info, at most 2,048 characters, not a non-public address", async () => {
      const base = "https://hooks.example.com/";
      const exactly = `${base}${"a".repeat(2048 - base.length)}`;
      for (const url of [exactly, "https://hooks.example.com:443/x?a=1#f"]) {
        await accepted("/v1/render", { html: "<p>x</p>", data: {}, webhook_url: url });
      }
      const bad: [unknown, RegExp][] = [
        [`${exactly}a`, /at most 2048 characters/],
        ["http://hooks.example.com/x", /must use https/],
        ["https://hooks.example.com:8443/x", /default port/],
        ["https://hooks.example.com:80/x", /default port/],
        ["https://user:pass@hooks.example.com/x", /credentials/],
        ["https://user@hooks.example.com/x", /credentials/],
        ["hooks.example.com/x", /not a valid absolute URL/],
        ["/relative/hook", /not a valid absolute URL/],
        ["https://hooks.exa\tmple.com/x", /spaces or control characters/],
        [" https://hooks.example.com/x", /spaces or control characters/],
        ["ftp://hooks.example.com/x", /must use https/],
        [42, /must be a string/],
        [null, /must be a string/],
        // An address the delivery would refuse, refused with the request (the documentation ranges: never anyone's receiver).
        ["https://203.0.113.5/hook", /host "203\.0\.113\.5" is a reserved address; webhooks are delivered to public addresses only/],
        ["https://[2001:db8::1]/hook", /host "\[2001:db8::1\]" is a reserved address/],
      ];
      for (const [url, message] of bad) {
        await rejected("/v1/render", { html: "<p>x</p>", data: {}, webhook_url: url }, new RegExp(`^webhook_url: .*${message.source}`));
      }
      await rejected("/v1/image", { template_id: "social-card", data: {}, webhook_url: "http://x.example.com" }, /^webhook_url: must use https/);
    });
  });

  describe("accepted jobs", () => {
    it("202 with Location, and GET /v1/jobs/<id> shows the job to its own key only", async () => {
      const owner = await h.admin.createKey("business");
      const response = await h.api.post("/v1/render", { html: "<p>{{name}}</p>", data: { name: "Ada" }, webhook_url: WEBHOOK }, { key: owner.apiKey });
      assert.equal(response.status, 202);
      const job = await h.api.get(response.headers.location!, { key: owner.apiKey });
      assert.equal(job.status, 200, job.text);
      assert.equal(job.json.id, response.json.id);
      assert.equal(job.json.status, "queued");
      assert.equal(job.json.kind, "render");
      assert.equal(job.json.template_id, null);
      assert.equal(job.json.url, null);
      assert.deepEqual(job.json.webhook, { state: "pending", attempts: 0, last_status: null, last_error: null, next_attempt_at: null });
      assert.deepEqual(
        job.json.events.map((e: { type: string }) => e.type),
        ["job.accepted"],
      );
      assert.equal(job.headers["cache-control"], "no-store");
      expectRateHeaders(job, 1000);

      const other = await h.api.get(response.headers.location!, { key });
      assert.match(expectError(other, 404, "NOT_FOUND"), /not found/);
      for (const id of ["job_00000000000000000000000000", "nope", "job_TOOSHORT", "out_00000000000000000000000000"]) {
        expectError(await h.api.get(`/v1/jobs/${id}`, { key }), 404, "NOT_FOUND");
      }
    });
  });

  describe("checkout and signup bodies", () => {
    it("POST /v1/billing/checkout takes exactly {plan} with a paid plan", async () => {
      const bad: [unknown, RegExp][] = [
        [{}, /^plan: must be one of starter, pro, business/],
        [{ plan: "free" }, /^plan: must be one of/],
        [{ plan: "demo" }, /^plan: must be one of/],
        [{ plan: "gold" }, /^plan: must be one of/],
        [{ plan: 3 }, /^plan: must be one of/],
        [{ plan: "pro", coupon: "FREE" }, /^unknown field: coupon/],
      ];
      for (const [json, message] of bad) {
        const response = await h.api.post("/v1/billing/checkout", json, { key });
        assert.match(expectError(response, 422, "PAYLOAD_INVALID"), message);
        expectRateHeaders(response, 1000);
      }
      // A valid body passes validation (the payment flow itself is the billing service's).
      const valid = await h.api.post("/v1/billing/checkout", { plan: "pro" }, { key: (await h.admin.createKey("starter")).apiKey });
      assert.ok(valid.status !== 422 && valid.status !== 401, valid.text);
      errorShapeUnlessSuccess(valid);
    });

    it("POST /v1/signup takes exactly {email}", async () => {
      const bad: [unknown, RegExp][] = [
        [{}, /^email: is required/],
        [{ email: 7 }, /^email: required, a string/],
        [{ email: "ada@example.com", plan: "business" }, /^unknown field: plan/],
      ];
      for (const [json, message] of bad) assert.match(expectError(await h.api.post("/v1/signup", json), 422, "PAYLOAD_INVALID"), message);
    });
  });

  describe("server-side failures", () => {
    it("metering, on the stack's local payment provider, says loudly that it upgrades without payment", () => {
      assert.match(h.stack.output(), /"level":"warn",.*BILLING_PROVIDER=local: FOR DEVELOPMENT ONLY\. Checkouts upgrade keys WITHOUT ANY PAYMENT/);
    });

    it("a dependency that is down is 500 INTERNAL_ERROR in the same shape, and the service recovers", async () => {
      const fresh = (await h.admin.createKey("business")).apiKey;
      await h.stack.services.kill("identity");
      try {
        const response = await h.api.get("/v1/keys/usage", { key: fresh });
        assert.match(expectError(response, 500, "INTERNAL_ERROR"), /temporarily unavailable/);
        assert.match(errorShape(response).hint, /retry/i);
      } finally {
        await h.stack.services.restart("identity");
      }
      // The gateway reconnects on its own (gRPC reconnect backoff).
      const deadline = Date.now() + 20_000;
      let status = 0;
      while (status !== 200 && Date.now() < deadline) {
        status = (await h.api.get("/v1/keys/usage", { key: fresh })).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(status, 200, "keyed requests work again once identity is back");
    });

    it("an uncaught exception is 500 INTERNAL_ERROR in the same shape, and is logged", async () => {
      const fresh = (await h.admin.createKey("business")).apiKey;
      const nc = await connect({ servers: h.stack.natsUrl });
      try {
        const jsm = await nc.jetstreamManager();
        // Without the RENDER stream, JetStream refuses the gateway's publish: an error no code path expects.
        await jsm.streams.delete("RENDER");
        const before = h.stack.output().split("unhandled error").length;
        const response = await h.api.post("/v1/render", { html: "<p>x</p>", data: {}, webhook_url: WEBHOOK }, { key: fresh });
        assert.equal(expectError(response, 500, "INTERNAL_ERROR"), "internal error", "no internal detail reaches the client");
        assert.match(errorShape(response).hint, /Retry with exponential backoff/);
        await new Promise((r) => setTimeout(r, 200));
        assert.ok(h.stack.output().split("unhandled error").length > before, "the failure is logged");
        await provisionNats(h.stack.natsUrl);
      } finally {
        await nc.close();
      }
      assert.equal((await h.api.post("/v1/render", { html: "<p>x</p>", data: {}, webhook_url: WEBHOOK }, { key: fresh })).status, 202);
    });
  });

  endOfSuiteChecks(() => h);
});

/** A response is either a success or the exact error shape. */
function errorShapeUnlessSuccess(response: ApiResponse): void {
  if (response.status >= 400) errorShape(response);
}

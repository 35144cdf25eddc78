import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Pressroom, PressroomError, type FetchLike, type RenderSucceeded } from "./index";
import { TestServer, closedPort, json, serverForSuite } from "./test-support/server";

const API_KEY = "pr_test_key_0123456789";

const succeeded: RenderSucceeded = {
  id: "job_01",
  status: "succeeded",
  url: "http://127.0.0.1/v1/outputs/out_1?exp=1&sig=ab",
  expires_at: "2026-01-02T00:00:00.000Z",
  content_type: "application/pdf",
  size_bytes: 1234,
};

async function rejection(promise: Promise<unknown>): Promise<PressroomError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof PressroomError, `expected PressroomError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected a rejection");
}

describe("Pressroom over HTTP", () => {
  let server: TestServer;
  let client: Pressroom;
  serverForSuite((s, c) => {
    server = s;
    client = c;
  }, API_KEY);

  it("render (sync) posts JSON with the bearer key and returns the output", async () => {
    server.handler = (_req, res) => json(res, 200, succeeded);
    const request = { template_id: "invoice", data: { number: "INV-1", total: 12.5, items: [{ name: "a" }] } };
    const result = await client.render(request);
    assert.deepEqual(result, succeeded);
    const req = server.last;
    assert.equal(req.method, "POST");
    assert.equal(req.url, "/v1/render");
    assert.equal(req.headers.authorization, `Bearer ${API_KEY}`);
    assert.match(req.headers["content-type"] ?? "", /^application\/json/);
    assert.match(req.headers.accept ?? "", /application\/json/);
    assert.deepEqual(JSON.parse(req.body), request);
  });

  it("render with raw html and webhook_url is accepted as queued", async () => {
    server.handler = (_req, res) => json(res, 202, { id: "job_02", status: "queued" }, { Location: "/v1/jobs/job_02" });
    const request = { html: "<h1>{{title}}</h1>", data: { title: "Hi" }, webhook_url: "https://example.com/hook" };
    const queued = await client.render(request);
    assert.deepEqual(queued, { id: "job_02", status: "queued" });
    assert.deepEqual(JSON.parse(server.last.body), request);
  });

  it("sends idempotencyKey as the Idempotency-Key header on render, image and checkout, and refuses a malformed one", async () => {
    server.handler = (_req, res) => json(res, 202, { id: "job_03", status: "queued" }, { "Idempotent-Replayed": "true" });
    await client.render({ html: "<p>x</p>", data: {}, webhook_url: "https://example.com/hook" }, { idempotencyKey: "order-42" });
    assert.equal(server.last.headers["idempotency-key"], "order-42");
    await client.image({ template_id: "social-card", data: {} }, { idempotencyKey: "~".repeat(255) });
    assert.equal(server.last.headers["idempotency-key"], "~".repeat(255));
    server.handler = (_req, res) => json(res, 201, { checkout_url: "http://x/c", session_id: "chk_1", plan: "pro" });
    await client.checkout({ plan: "pro" }, { idempotencyKey: "upgrade-1" });
    assert.equal(server.last.headers["idempotency-key"], "upgrade-1");
    await client.render({ html: "<p>x</p>", data: {} });
    assert.equal(server.last.headers["idempotency-key"], undefined, "no header without the option");
    const sent = server.requests.length;
    for (const bad of ["", "a b", "x".repeat(256), "caf\u00e9"]) {
      await assert.rejects(client.render({ html: "<p>x</p>", data: {} }, { idempotencyKey: bad }), /idempotencyKey must be 1 to 255 visible ASCII characters/);
    }
    assert.equal(server.requests.length, sent, "nothing sent with a malformed key");
  });

  it("renderDocument asks for the PDF itself and returns its bytes with the job's id, URL and expiry", async () => {
    const pdf = Buffer.from("%PDF-1.7\n...%%EOF\n");
    server.handler = (_req, res) => {
      res.writeHead(200, {
        "Content-Type": "application/pdf",
        "Content-Length": String(pdf.length),
        "Pressroom-Job-Id": "job_01",
        "Content-Location": succeeded.url,
        "Pressroom-Expires-At": succeeded.expires_at,
      });
      res.end(pdf);
    };
    const document = await client.renderDocument({ template_id: "invoice", data: {} }, { idempotencyKey: "doc-1" });
    assert.equal(server.last.headers.accept, "application/pdf");
    assert.equal(server.last.headers["idempotency-key"], "doc-1");
    assert.equal(server.last.url, "/v1/render");
    assert.ok(document.status === "succeeded");
    assert.deepEqual(Buffer.from(document.bytes), pdf);
    assert.deepEqual(
      { id: document.id, url: document.url, expires_at: document.expires_at, content_type: document.content_type, size_bytes: document.size_bytes },
      { id: "job_01", url: succeeded.url, expires_at: succeeded.expires_at, content_type: "application/pdf", size_bytes: pdf.length },
    );
  });

  it("imageDocument asks for image/png; a job still running comes back queued, an error rejects", async () => {
    server.handler = (_req, res) => json(res, 202, { id: "job_04", status: "queued" }, { Location: "/v1/jobs/job_04" });
    assert.deepEqual(await client.imageDocument({ template_id: "og-image", data: {} }), { id: "job_04", status: "queued" });
    assert.equal(server.last.headers.accept, "image/png");
    assert.equal(server.last.url, "/v1/image");
    await client.imageDocument({ url: "https://example.com/", data: {}, options: { format: "webp", width: 800, height: 600 } });
    assert.equal(server.last.headers.accept, "image/webp", "the type options.format asks for");
    assert.deepEqual(JSON.parse(server.last.body), { url: "https://example.com/", data: {}, options: { format: "webp", width: 800, height: 600 } });
    server.handler = (_req, res) => json(res, 404, { error: 'template "x" does not exist', code: "TEMPLATE_NOT_FOUND", hint: "List them." });
    await assert.rejects(
      client.imageDocument({ template_id: "x", data: {} }),
      (err: unknown) => err instanceof PressroomError && err.code === "TEMPLATE_NOT_FOUND",
    );
  });

  it("renderDocument downloads the document when the service answers JSON anyway", async () => {
    const pdf = Buffer.from("%PDF-1.7 fallback");
    server.handler = (req, res) => {
      if (req.method === "POST") return json(res, 200, { ...succeeded, url: `${server.baseUrl}/v1/outputs/out_1?exp=1&sig=ab` });
      res.writeHead(200, { "Content-Type": "application/pdf" });
      res.end(pdf);
    };
    const document = await client.renderDocument({ html: "<p>x</p>", data: {} });
    assert.ok(document.status === "succeeded");
    assert.deepEqual(Buffer.from(document.bytes), pdf);
    assert.equal(server.last.method, "GET");
    assert.equal(server.last.headers.authorization, undefined, "the signed URL is fetched without the key");
  });

  it("image posts to /v1/image", async () => {
    server.handler = (_req, res) => json(res, 200, { ...succeeded, content_type: "image/png" });
    const result = await client.image({ template_id: "social-card", data: { title: "Launch" } });
    assert.equal(result.status, "succeeded");
    assert.equal(server.last.url, "/v1/image");
    assert.equal(server.last.method, "POST");
    assert.equal(server.last.headers.authorization, `Bearer ${API_KEY}`);
    assert.deepEqual(JSON.parse(server.last.body), { template_id: "social-card", data: { title: "Launch" } });
  });

  it("templates, usage, webhookSecret and job are keyed GETs", async () => {
    const answers: Record<string, unknown> = {
      "/v1/templates": { templates: [{ id: "invoice", name: "Invoice", description: "", output: "pdf", data_schema: {}, sample_data: {} }] },
      "/v1/keys/usage": {
        plan: "free",
        period: { start: "a", end: "b" },
        renders: { used: 1, limit: 100, remaining: 99 },
        previews: { used: 2, limit: 300, remaining: 298 },
        test: { used: 3, limit: 20, remaining: 17 },
        rate_limit: { limit: 10, remaining: 9, reset_seconds: 30, window_seconds: 60 },
        concurrency: { limit: 1, in_flight: 0 },
      },
      "/v1/keys/webhook-secret": { secret: "whsec_abc" },
      "/v1/jobs/job_01%2F..": { id: "job_01/..", status: "queued" },
    };
    server.handler = (req, res) => json(res, 200, answers[req.url]);
    assert.equal((await client.templates()).templates[0]?.id, "invoice");
    const usage = await client.usage();
    assert.equal(usage.renders.remaining, 99);
    assert.equal(usage.previews.remaining, 298);
    assert.deepEqual(usage.test, { used: 3, limit: 20, remaining: 17 });
    assert.deepEqual(await client.webhookSecret(), { secret: "whsec_abc" });
    assert.equal((await client.job("job_01/..")).status, "queued");
    assert.deepEqual(
      server.requests.map((r) => [r.method, r.url, r.headers.authorization, r.body]),
      Object.keys(answers).map((path) => ["GET", path, `Bearer ${API_KEY}`, ""]),
    );
  });

  it("own templates: create and update send assets as base64; get, versions and delete use the template's paths", async () => {
    const entry = { id: "letter", version: 1, name: "Letter", description: "", output: "pdf", data_schema: {}, sample_data: {}, visibility: "private" };
    server.handler = (req, res) => {
      if (req.method === "DELETE") {
        res.writeHead(204);
        res.end();
        return;
      }
      if (req.url!.endsWith("/versions"))
        return json(res, 200, {
          versions: [
            { version: 2, created_at: "b" },
            { version: 1, created_at: "a" },
          ],
        });
      json(res, req.method === "POST" ? 201 : 200, entry);
    };
    const logo = new Uint8Array([0, 1, 2, 250, 255]);
    assert.equal(
      (await client.createTemplate({ id: "letter", name: "Letter", output: "pdf", html: "<p>{{x}}</p>", assets: { "logo.png": logo } })).visibility,
      "private",
    );
    await client.updateTemplate("letter", { name: "Letter", output: "pdf", html: "<p>2</p>", options: { margin: { top: "2cm" }, metadata: { title: "T" } } });
    assert.equal((await client.template("letter")).id, "letter");
    await client.template("letter", 1);
    assert.deepEqual(
      (await client.templateVersions("letter")).versions.map((v) => v.version),
      [2, 1],
    );
    assert.equal(await client.deleteTemplate("letter"), undefined);
    assert.deepEqual(
      server.requests.map((r) => [r.method, r.url]),
      [
        ["POST", "/v1/templates"],
        ["PUT", "/v1/templates/letter"],
        ["GET", "/v1/templates/letter"],
        ["GET", "/v1/templates/letter/versions/1"],
        ["GET", "/v1/templates/letter/versions"],
        ["DELETE", "/v1/templates/letter"],
      ],
    );
    assert.deepEqual(JSON.parse(server.requests[0]!.body), {
      id: "letter",
      name: "Letter",
      output: "pdf",
      html: "<p>{{x}}</p>",
      assets: { "logo.png": Buffer.from(logo).toString("base64") },
    });
    assert.deepEqual(JSON.parse(server.requests[1]!.body), {
      name: "Letter",
      output: "pdf",
      html: "<p>2</p>",
      options: { margin: { top: "2cm" }, metadata: { title: "T" } },
    });
    assert.ok(server.requests.every((r) => r.headers.authorization === `Bearer ${API_KEY}`));
  });

  it("previews: a version's PNG by its path, a draft's posted as a template body; both ask for image/png with the key", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    server.handler = (_req, res) => {
      res.writeHead(200, { "Content-Type": "image/png", "Content-Length": png.byteLength });
      res.end(png);
    };
    assert.deepEqual(Buffer.from(await client.templatePreview("letter")), png);
    assert.deepEqual(Buffer.from(await client.templatePreview("letter", 2)), png);
    const logo = new Uint8Array([0, 255]);
    assert.deepEqual(Buffer.from(await client.previewTemplate({ name: "Draft", output: "pdf", html: "<p>{{x}}</p>", assets: { "logo.png": logo } })), png);
    assert.deepEqual(
      server.requests.map((r) => [r.method, r.url, r.headers.accept, r.headers.authorization]),
      [
        ["GET", "/v1/templates/letter/preview.png", "image/png", `Bearer ${API_KEY}`],
        ["GET", "/v1/templates/letter/versions/2/preview.png", "image/png", `Bearer ${API_KEY}`],
        ["POST", "/v1/templates/preview", "image/png", `Bearer ${API_KEY}`],
      ],
    );
    assert.deepEqual(JSON.parse(server.requests[2]!.body), { name: "Draft", output: "pdf", html: "<p>{{x}}</p>", assets: { "logo.png": "AP8=" } });
    server.handler = (_req, res) => json(res, 422, { error: "html: does not compile at line 1, column 4: x", code: "PAYLOAD_INVALID", hint: "Fix it." });
    const error = await rejection(client.previewTemplate({ name: "Draft", output: "pdf", html: "<p>{{#if x}</p>" }));
    assert.deepEqual([error.status, error.code, error.message], [422, "PAYLOAD_INVALID", "html: does not compile at line 1, column 4: x"]);
  });

  it("checkout posts the plan and returns the session", async () => {
    server.handler = (_req, res) => json(res, 201, { checkout_url: "http://x/checkout/cs_1", session_id: "cs_1", plan: "pro" });
    const session = await client.checkout({ plan: "pro" });
    assert.equal(session.session_id, "cs_1");
    assert.equal(server.last.url, "/v1/billing/checkout");
    assert.deepEqual(JSON.parse(server.last.body), { plan: "pro" });
  });

  it("rotateKey posts with the key, no body, and returns the new key", async () => {
    const answer = { api_key: "pr_live_new0123456789012345", previous_key_expires_at: "2026-11-29T00:00:00.000Z" };
    server.handler = (_req, res) => json(res, 201, answer);
    assert.deepEqual(await client.rotateKey(), answer);
    assert.deepEqual(
      [server.last.method, server.last.url, server.last.headers.authorization, server.last.body],
      ["POST", "/v1/keys/rotate", `Bearer ${API_KEY}`, ""],
    );
  });

  it("Pressroom.signup posts the email without an Authorization header", async () => {
    server.handler = (_req, res) => json(res, 201, { api_key: "pr_new", plan: "free" });
    const result = await Pressroom.signup({ email: "ada@example.com", baseUrl: server.baseUrl });
    assert.deepEqual(result, { api_key: "pr_new", plan: "free" });
    assert.equal(server.last.method, "POST");
    assert.equal(server.last.url, "/v1/signup");
    assert.equal(server.last.headers.authorization, undefined);
    assert.deepEqual(JSON.parse(server.last.body), { email: "ada@example.com" });
  });

  it("maps an error body to PressroomError code/status/message/hint", async () => {
    server.handler = (_req, res) =>
      json(res, 404, { error: 'template "nope" does not exist', code: "TEMPLATE_NOT_FOUND", hint: "List templates with GET /v1/templates." });
    const err = await rejection(client.render({ template_id: "nope", data: {} }));
    assert.equal(err.code, "TEMPLATE_NOT_FOUND");
    assert.equal(err.status, 404);
    assert.equal(err.message, 'template "nope" does not exist');
    assert.equal(err.hint, "List templates with GET /v1/templates.");
    assert.equal(err.retryAfter, undefined);
    assert.equal(err.name, "PressroomError");
    assert.ok(err instanceof Error);
  });

  it("maps 401 AUTH_INVALID and 422 PAYLOAD_INVALID", async () => {
    server.handler = (_req, res) =>
      json(res, 401, { error: "invalid API key", code: "AUTH_INVALID", hint: "Send Authorization: Bearer <key>." }, { "WWW-Authenticate": "Bearer" });
    const auth = await rejection(client.usage());
    assert.deepEqual([auth.code, auth.status], ["AUTH_INVALID", 401]);
    server.handler = (_req, res) => json(res, 422, { error: "webhook_url: must be https", code: "PAYLOAD_INVALID", hint: "Use an https URL." });
    const payload = await rejection(client.render({ html: "x", data: {}, webhook_url: "http://x" }));
    assert.deepEqual([payload.code, payload.status, payload.hint], ["PAYLOAD_INVALID", 422, "Use an https URL."]);
  });

  it("reads Retry-After on the three distinct 429 codes", async () => {
    for (const [code, seconds] of [
      ["RATE_LIMITED", "7"],
      ["QUOTA_EXCEEDED", "86400"],
      ["CONCURRENCY_EXCEEDED", "1"],
    ] as const) {
      server.handler = (_req, res) => json(res, 429, { error: "slow down", code, hint: "Wait." }, { "Retry-After": seconds });
      const err = await rejection(client.render({ template_id: "invoice", data: {} }));
      assert.equal(err.code, code);
      assert.equal(err.status, 429);
      assert.equal(err.retryAfter, Number(seconds));
    }
  });

  it("falls back to INTERNAL_ERROR when the error body is not the API's shape", async () => {
    server.handler = (_req, res) => {
      res.writeHead(502, { "Content-Type": "text/html" });
      res.end("<html>Bad Gateway</html>");
    };
    const html = await rejection(client.templates());
    assert.deepEqual([html.code, html.status], ["INTERNAL_ERROR", 502]);
    server.handler = (_req, res) => json(res, 500, { message: "boom" });
    const other = await rejection(client.templates());
    assert.deepEqual([other.code, other.status], ["INTERNAL_ERROR", 500]);
    server.handler = (_req, res) => json(res, 503, ["not", "an", "object"], { "Retry-After": "3" });
    const array = await rejection(client.templates());
    assert.deepEqual([array.code, array.status, array.retryAfter], ["INTERNAL_ERROR", 503, 3]);
  });

  it("rejects a 2xx answer that is not JSON", async () => {
    server.handler = (_req, res) => {
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("ok");
    };
    const err = await rejection(client.usage());
    assert.deepEqual([err.code, err.status], ["INTERNAL_ERROR", 200]);
  });

  it("download returns the bytes and sends no Authorization header", async () => {
    const pdf = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x80, 0x0a]);
    server.handler = (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/pdf", "Content-Length": pdf.length });
      res.end(pdf);
    };
    const bytes = await client.download(`${server.baseUrl}/v1/outputs/out_1?exp=1767225600&sig=abc123`);
    assert.ok(bytes instanceof Uint8Array);
    assert.deepEqual(Buffer.from(bytes), pdf);
    assert.equal(server.last.method, "GET");
    assert.equal(server.last.url, "/v1/outputs/out_1?exp=1767225600&sig=abc123");
    assert.equal(server.last.headers.authorization, undefined);

    await client.download("/v1/outputs/out_2?exp=1&sig=def");
    assert.equal(server.last.url, "/v1/outputs/out_2?exp=1&sig=def", "a relative URL resolves against baseUrl");
    assert.equal(server.last.headers.authorization, undefined);
  });

  it("download maps expired and tampered URLs", async () => {
    server.handler = (_req, res) => json(res, 410, { error: "this download link has expired", code: "URL_EXPIRED", hint: "Render again." });
    const expired = await rejection(client.download(`${server.baseUrl}/v1/outputs/out_1?exp=1&sig=abc`));
    assert.deepEqual([expired.code, expired.status], ["URL_EXPIRED", 410]);
    server.handler = (_req, res) => json(res, 403, { error: "this download link is not valid", code: "URL_INVALID", hint: "Use the exact URL." });
    const invalid = await rejection(client.download(`${server.baseUrl}/v1/outputs/out_1?exp=1&sig=abd`));
    assert.deepEqual([invalid.code, invalid.status], ["URL_INVALID", 403]);
    await assert.rejects(client.download("ftp://example.com/x"), TypeError);
  });

  it("times out with code TIMEOUT (status 0) and keeps the signed URL out of the message", async () => {
    server.handler = (_req, res) => {
      setTimeout(() => json(res, 200, succeeded), 1_000).unref();
    };
    const slow = new Pressroom({ apiKey: API_KEY, baseUrl: server.baseUrl, timeoutMs: 50 });
    const err = await rejection(slow.download(`${server.baseUrl}/v1/outputs/out_1?exp=1&sig=secret-signature`));
    assert.deepEqual([err.code, err.status], ["TIMEOUT", 0]);
    assert.ok(!err.message.includes("secret-signature"));
    const render = await rejection(slow.render({ template_id: "invoice", data: {} }));
    assert.equal(render.code, "TIMEOUT");
  });

  it("uses an injected fetch", async () => {
    const seen: string[] = [];
    const fetchSpy: FetchLike = (input, init) => {
      seen.push(`${init.method} ${input}`);
      return fetch(input, init);
    };
    server.handler = (_req, res) => json(res, 200, { secret: "whsec_x" });
    const injected = new Pressroom({ apiKey: API_KEY, baseUrl: server.baseUrl, fetch: fetchSpy });
    await injected.webhookSecret();
    assert.deepEqual(seen, [`GET ${server.baseUrl}/v1/keys/webhook-secret`]);
  });
});

describe("Pressroom without a server", () => {
  it("reports an unreachable service as CONNECTION_ERROR (status 0)", async () => {
    const port = await closedPort();
    const client = new Pressroom({ apiKey: API_KEY, baseUrl: `http://127.0.0.1:${port}` });
    const err = await rejection(client.usage());
    assert.deepEqual([err.code, err.status], ["CONNECTION_ERROR", 0]);
    assert.ok(err.cause, "the network error is kept as cause");
  });
});

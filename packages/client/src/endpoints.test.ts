import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { Pressroom, PressroomError } from "./index";
import { TestServer, json } from "./test-support/server";

const API_KEY = "pr_test_key_0123456789";
const QUEUED = { id: "job_01", status: "queued" };

function error(status: number, code: string, retryAfter?: string): (req: unknown, res: import("node:http").ServerResponse) => void {
  return (_req, res) => json(res, status, { error: "no", code, hint: "Wait." }, retryAfter === undefined ? {} : { "Retry-After": retryAfter });
}

describe("the endpoints and retries the Python client has too", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
  });

  /** The server answers with these handlers in turn, then 500s. */
  function answer(...handlers: ReturnType<typeof error>[]): void {
    let n = 0;
    server.handler = (req, res) => (handlers[n++] ?? error(500, "INTERNAL_ERROR"))(req, res);
  }
  const keys = () => server.requests.map((r) => String(r.headers["idempotency-key"] ?? ""));

  it("takes the base address from PRESSROOM_BASE_URL when none is given", () => {
    const saved = process.env.PRESSROOM_BASE_URL;
    process.env.PRESSROOM_BASE_URL = "https://pressroom.example/";
    try {
      assert.equal(new Pressroom({ apiKey: API_KEY }).baseUrl, "https://pressroom.example");
      assert.equal(new Pressroom({ apiKey: API_KEY, baseUrl: "http://127.0.0.1:1" }).baseUrl, "http://127.0.0.1:1");
    } finally {
      if (saved === undefined) delete process.env.PRESSROOM_BASE_URL;
      else process.env.PRESSROOM_BASE_URL = saved;
    }
  });

  it("does not retry by default, and sends no Idempotency-Key of its own", async () => {
    answer(error(500, "INTERNAL_ERROR"), (_req, res) => json(res, 202, QUEUED));
    const client = new Pressroom({ apiKey: API_KEY, baseUrl: server.baseUrl });
    await assert.rejects(client.render({ template_id: "invoice", data: {} }), (err: PressroomError) => err.code === "INTERNAL_ERROR");
    assert.deepEqual(keys(), [""]);
  });

  it("with maxRetries, waits Retry-After on a 429 and retries with one Idempotency-Key for every attempt", async () => {
    answer(error(429, "CONCURRENCY_EXCEEDED", "0"), error(503, "UNAVAILABLE"), (_req, res) => json(res, 202, QUEUED));
    const client = new Pressroom({ apiKey: API_KEY, baseUrl: server.baseUrl, maxRetries: 2 });
    assert.deepEqual(await client.render({ template_id: "invoice", data: { n: 1 } }), QUEUED);
    const sent = keys();
    assert.equal(sent.length, 3);
    assert.match(sent[0] ?? "", /^[\x21-\x7e]{1,255}$/);
    assert.deepEqual(new Set(sent), new Set([sent[0]]));
    assert.deepEqual(new Set(server.requests.map((r) => r.body)), new Set(['{"template_id":"invoice","data":{"n":1}}']));
  });

  it("gives up after maxRetries, at once on a Retry-After beyond maxRetryWaitMs, and never retries a 4xx", async () => {
    const client = new Pressroom({ apiKey: API_KEY, baseUrl: server.baseUrl, maxRetries: 1 });
    answer(error(500, "INTERNAL_ERROR"), error(500, "INTERNAL_ERROR"));
    await assert.rejects(client.usage(), (err: PressroomError) => err.status === 500);
    assert.equal(server.requests.length, 2);
    server.requests.length = 0;
    answer(error(429, "QUOTA_EXCEEDED", "86400"));
    await assert.rejects(client.render({ template_id: "invoice", data: {} }), (err: PressroomError) => err.code === "QUOTA_EXCEEDED");
    assert.equal(server.requests.length, 1);
    server.requests.length = 0;
    answer(error(422, "PAYLOAD_INVALID"));
    await assert.rejects(client.render({ template_id: "invoice", data: {} }), (err: PressroomError) => err.code === "PAYLOAD_INVALID");
    assert.equal(server.requests.length, 1);
  });

  it("with maxRetries, screenshot, checkout and createBatch send an Idempotency-Key of their own too, and a read sends none", async () => {
    server.handler = (_req, res) => json(res, 202, QUEUED);
    const client = new Pressroom({ apiKey: API_KEY, baseUrl: server.baseUrl, maxRetries: 1 });
    await client.screenshot({ html: "<p>x</p>" });
    await client.checkout({ plan: "pro" });
    await client.createBatch({ items: [{ template_id: "invoice", data: {} }] });
    await client.job("job_01");
    assert.deepEqual(
      server.requests.map((r) => `${r.method} ${r.url}`),
      ["POST /v1/screenshot", "POST /v1/billing/checkout", "POST /v1/batches", "GET /v1/jobs/job_01"],
    );
    const [screenshot, checkout, batch, read] = keys();
    for (const key of [screenshot, checkout, batch]) assert.match(key ?? "", /^[\x21-\x7e]{1,255}$/);
    assert.equal(new Set([screenshot, checkout, batch]).size, 3, "one key per call");
    assert.equal(read, "");
  });

  it("rotateWebhookSecret posts to the rotation and answers the new secret", async () => {
    const rotated = { secret: "whsec_bmV3LXNlY3JldA", previous_secret_expires_at: "2026-01-02T00:00:00.000Z" };
    server.handler = (_req, res) => json(res, 200, rotated);
    assert.deepEqual(await new Pressroom({ apiKey: API_KEY, baseUrl: server.baseUrl }).rotateWebhookSecret(), rotated);
    assert.equal(server.last.method, "POST");
    assert.equal(server.last.url, "/v1/keys/webhook-secret/rotate");
    assert.equal(server.last.headers.authorization, `Bearer ${API_KEY}`);
  });

  it("templatePreview answers the PNG's bytes, asked with the key", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    server.handler = (_req, res) => {
      res.writeHead(200, { "Content-Type": "image/png", "Content-Length": png.length });
      res.end(png);
    };
    const bytes = await new Pressroom({ apiKey: API_KEY, baseUrl: server.baseUrl }).templatePreview("my invoice");
    assert.deepEqual(Buffer.from(bytes), png);
    assert.equal(server.last.url, "/v1/templates/my%20invoice/preview.png");
    assert.equal(server.last.headers.authorization, `Bearer ${API_KEY}`);
  });

  it("waitForJob reads the job until it finished, and rejects with TIMEOUT when it does not", async () => {
    const states = ["queued", "rendering", "succeeded"];
    let n = 0;
    server.handler = (_req, res) => json(res, 200, { id: "job_01", status: states[Math.min(n++, 2)] });
    const client = new Pressroom({ apiKey: API_KEY, baseUrl: server.baseUrl });
    const job = await client.waitForJob("job_01", { intervalMs: 10 });
    assert.equal(job.status, "succeeded");
    assert.equal(server.requests.length, 3);
    assert.ok(server.requests.every((r) => r.url === "/v1/jobs/job_01"));
    server.handler = (_req, res) => json(res, 200, { id: "job_02", status: "rendering" });
    await assert.rejects(client.waitForJob("job_02", { timeoutMs: 50, intervalMs: 10 }), (err: PressroomError) => err.code === "TIMEOUT" && err.status === 0);
  });

  it("deleteOutput sends DELETE /v1/outputs/<id> with the key, given the id or the output's signed URL", async () => {
    server.handler = (_req, res) => {
      res.writeHead(204);
      res.end();
    };
    const client = new Pressroom({ apiKey: API_KEY, baseUrl: server.baseUrl });
    assert.equal(await client.deleteOutput("out_abc123def456"), undefined);
    await client.deleteOutput(`${server.baseUrl}/v1/outputs/out_fromurl0001?exp=1&sig=${"a".repeat(64)}`);
    await client.deleteOutput("/v1/outputs/out_relative01?exp=1&sig=0");
    assert.deepEqual(
      server.requests.map((r) => [r.method, r.url, r.headers.authorization]),
      [
        ["DELETE", "/v1/outputs/out_abc123def456", `Bearer ${API_KEY}`],
        ["DELETE", "/v1/outputs/out_fromurl0001", `Bearer ${API_KEY}`],
        ["DELETE", "/v1/outputs/out_relative01", `Bearer ${API_KEY}`],
      ],
    );
    assert.throws(() => client.deleteOutput("https://example.com/v1/jobs/job_1"), /an output's id or its \/v1\/outputs\/<id> URL/);
  });
});

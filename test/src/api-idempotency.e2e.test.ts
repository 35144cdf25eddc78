import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Pressroom, PressroomError } from "@pressroom/client";
import { distinctFreePorts, serviceEnv, startService, stopChild, waitFor, waitReady, type ServiceProcess, type StackPorts } from "@pressroom/stack";
import pg from "pg";
import { Api, errorShape, type ApiResponse } from "./test-support/api";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";

/**
 * Idempotency-Key over HTTP with two gateway processes on one stack (real
 * render pool, metering, PostgreSQL and NATS): duplicates sent to both at
 * once are admitted once, replayed with Idempotent-Replayed: true, and counted
 * once; another body under the same key is refused; keys are per API key and
 * kept 24 hours.
 */

const WEBHOOK = "https://hooks.example.com/pressroom";

describe("Idempotency-Key across two gateways", () => {
  let h: Harness;
  let second: Api;
  let workDir: string;
  let gatewayB: ServiceProcess | undefined;
  let db: pg.Client;
  const gateway = (i: number) => (i % 2 === 0 ? h.api : second);
  const usage = async (apiKey: string) => (await h.api.get("/v1/keys/usage", { key: apiKey })).json;
  const replayed = (responses: ApiResponse[]) => responses.filter((r) => r.headers["idempotent-replayed"] === "true").length;

  before(async () => {
    h = await startHarness({ serviceEnv: { metering: { SWEEP_INTERVAL_MS: "1000" } } });
    workDir = mkdtempSync(path.join(tmpdir(), "pressroom-idempotency-"));
    const [httpB, healthB] = (await distinctFreePorts(2)) as [number, number];
    const ports: StackPorts = { ...h.stack.ports, http: httpB, health: { ...h.stack.ports.health, gateway: healthB } };
    const env = serviceEnv("gateway", {
      databaseUrls: h.stack.databaseUrls,
      natsUrl: h.stack.natsUrl,
      ports,
      logDir: workDir,
      certificates: h.stack.certificates,
      sealingKey: h.stack.sealingKey,
      destinationSealingKey: h.stack.destinationSealingKey,
      env: { LOG_LEVEL: "info" },
    });
    gatewayB = startService("gateway", env, workDir);
    await waitReady("gateway", healthB, gatewayB.child);
    second = new Api(`http://127.0.0.1:${httpB}`);
    db = new pg.Client({ connectionString: h.stack.databaseUrl });
    await db.connect();
  });

  after(async () => {
    await db?.end();
    if (gatewayB) await stopChild(gatewayB.child, "SIGTERM", 10_000);
    await h?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it("async: 10 parallel duplicates on two gateways make one job, the same 202 for all, counted once", async () => {
    const { apiKey } = await h.admin.createKey("business");
    const key = randomUUID();
    const body = { html: "<p>Hello {{n}}</p>", data: { n: 1 }, webhook_url: WEBHOOK };
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => gateway(i).post("/v1/render", body, { key: apiKey, headers: { "idempotency-key": key } })),
    );
    for (const response of responses) {
      assert.equal(response.status, 202, response.text);
      assert.deepEqual(response.json, responses[0]!.json);
      assert.equal(response.headers.location, `/v1/jobs/${responses[0]!.json.id}`);
    }
    assert.equal(replayed(responses), 9, "all but the first are replays");
    const later = await second.post("/v1/render", body, { key: apiKey, headers: { "idempotency-key": key } });
    assert.deepEqual([later.status, later.json, later.headers["idempotent-replayed"]], [202, responses[0]!.json, "true"]);
    await waitFor("the job's slot freed", async () => (await usage(apiKey)).concurrency.in_flight === 0, 30_000);
    assert.equal((await usage(apiKey)).renders.used, 1, "one render counted");
  });

  it("sync: a duplicate sent while the first renders waits for it; both answer the same 200, and later replays too", async () => {
    const { apiKey } = await h.admin.createKey("business");
    const key = randomUUID();
    const body = { html: "<p>slow</p><script>const t = Date.now(); while (Date.now() - t < 1500) {}</script>", data: {} };
    const [a, b] = await Promise.all([0, 1].map((i) => gateway(i).post("/v1/render", body, { key: apiKey, headers: { "idempotency-key": key } })));
    for (const response of [a!, b!]) assert.equal(response.status, 200, response.text);
    assert.deepEqual(a!.json, b!.json, "the same job, url and expiry");
    assert.equal(replayed([a!, b!]), 1);
    const again = await h.api.post("/v1/render", body, { key: apiKey, headers: { "idempotency-key": key } });
    assert.deepEqual([again.status, again.json, again.headers["idempotent-replayed"]], [200, a!.json, "true"]);
    assert.equal((await usage(apiKey)).renders.used, 1);
  });

  it("a failed render is replayed as the same 422 RENDER_FAILED", async () => {
    const { apiKey } = await h.admin.createKey("business");
    const key = randomUUID();
    const body = { html: "<script>throw new Error('broken total')</script>", data: {} };
    const first = await h.api.post("/v1/render", body, { key: apiKey, headers: { "idempotency-key": key } });
    assert.equal(first.status, 422, first.text);
    assert.equal(errorShape(first).code, "RENDER_FAILED");
    assert.match(first.json.error, /uncaught exception: Error: broken total$/);
    const again = await second.post("/v1/render", body, { key: apiKey, headers: { "idempotency-key": key } });
    assert.deepEqual([again.status, again.json, again.headers["idempotent-replayed"]], [422, first.json, "true"]);
  });

  it("the same key with another body, or on another operation, is 422 IDEMPOTENCY_KEY_REUSED", async () => {
    const { apiKey } = await h.admin.createKey("business");
    const key = randomUUID();
    const first = await h.api.post("/v1/render", { html: "<p>a</p>", data: {}, webhook_url: WEBHOOK }, { key: apiKey, headers: { "idempotency-key": key } });
    assert.equal(first.status, 202);
    for (const [api, route, body] of [
      [second, "/v1/render", { html: "<p>b</p>", data: {}, webhook_url: WEBHOOK }],
      [h.api, "/v1/render", { html: "<p>a</p>", data: { x: 1 }, webhook_url: WEBHOOK }],
      [second, "/v1/image", { template_id: "social-card", data: { title: "t", brand: "b" }, webhook_url: WEBHOOK }],
    ] as const) {
      const response = await api.post(route, body, { key: apiKey, headers: { "idempotency-key": key } });
      assert.equal(response.status, 422, response.text);
      assert.deepEqual(Object.keys(response.json).sort(), ["code", "error", "hint"]);
      assert.equal(errorShape(response).code, "IDEMPOTENCY_KEY_REUSED");
      assert.equal(response.headers["idempotent-replayed"], undefined);
    }
    assert.equal((await usage(apiKey)).renders.used, 1);
  });

  it("the same key under another API key is unrelated", async () => {
    const [one, two] = await Promise.all([h.admin.createKey("business"), h.admin.createKey("business")]);
    const key = randomUUID();
    const body = { html: "<p>mine</p>", data: {}, webhook_url: WEBHOOK };
    const a = await h.api.post("/v1/render", body, { key: one.apiKey, headers: { "idempotency-key": key } });
    const b = await second.post("/v1/render", body, { key: two.apiKey, headers: { "idempotency-key": key } });
    assert.deepEqual([a.status, b.status], [202, 202]);
    assert.notEqual(a.json.id, b.json.id);
    assert.equal(replayed([a, b]), 0);
  });

  it("a malformed Idempotency-Key is 422 PAYLOAD_INVALID and uses nothing", async () => {
    const { apiKey } = await h.admin.createKey("business");
    for (const bad of ["", " ", "x".repeat(256), "caf\u00e9", "a b"]) {
      const response = await h.api.request("POST", "/v1/render", {
        key: apiKey,
        body: Buffer.from(JSON.stringify({ html: "<p>x</p>", data: {}, webhook_url: WEBHOOK })),
        headers: { "content-type": "application/json", "idempotency-key": bad },
      });
      assert.equal(response.status, 422, `${JSON.stringify(bad)}: ${response.text}`);
      assert.equal(errorShape(response).code, "PAYLOAD_INVALID");
      assert.match(response.json.error, /^Idempotency-Key: must be 1 to 255 visible ASCII characters/);
    }
    const longest = await h.api.post(
      "/v1/render",
      { html: "<p>x</p>", data: {}, webhook_url: WEBHOOK },
      { key: apiKey, headers: { "idempotency-key": "~".repeat(255) } },
    );
    assert.equal(longest.status, 202, longest.text);
    assert.equal((await usage(apiKey)).renders.used, 1);
  });

  it("checkout: the same key gives the same session from either gateway; another plan is IDEMPOTENCY_KEY_REUSED", async () => {
    const { apiKey } = await h.admin.createKey("free");
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 4 }, (_, i) => gateway(i).post("/v1/billing/checkout", { plan: "pro" }, { key: apiKey, headers: { "idempotency-key": key } })),
    );
    for (const response of responses) {
      assert.equal(response.status, 201, response.text);
      assert.deepEqual(response.json, responses[0]!.json);
    }
    assert.equal(replayed(responses), 3);
    const other = await second.post("/v1/billing/checkout", { plan: "starter" }, { key: apiKey, headers: { "idempotency-key": key } });
    assert.equal(errorShape(other).code, "IDEMPOTENCY_KEY_REUSED");
    const fresh = await h.api.post("/v1/billing/checkout", { plan: "pro" }, { key: apiKey, headers: { "idempotency-key": randomUUID() } });
    assert.notEqual(fresh.json.session_id, responses[0]!.json.session_id);
  });

  it("the JavaScript client sends idempotencyKey: a retry gets the same job, another body IDEMPOTENCY_KEY_REUSED", async () => {
    const { apiKey } = await h.admin.createKey("business");
    const client = new Pressroom({ apiKey, baseUrl: h.stack.baseUrl });
    const key = randomUUID();
    const request = { html: "<p>client</p>", data: {}, webhook_url: WEBHOOK };
    const first = await client.render(request, { idempotencyKey: key });
    const retry = await client.render(request, { idempotencyKey: key });
    assert.deepEqual(retry, first);
    await assert.rejects(client.render({ ...request, data: { changed: true } }, { idempotencyKey: key }), (err: unknown) => {
      assert.ok(err instanceof PressroomError);
      assert.deepEqual([err.code, err.status], ["IDEMPOTENCY_KEY_REUSED", 422]);
      return true;
    });
  });

  it("a key is kept 24 hours: an older record no longer answers, and the sweep removes it", async () => {
    const { apiKey, keyId } = await h.admin.createKey("business");
    const key = randomUUID();
    const body = { html: "<p>day one</p>", data: {}, webhook_url: WEBHOOK };
    const first = await h.api.post("/v1/render", body, { key: apiKey, headers: { "idempotency-key": key } });
    const within = await h.api.post("/v1/render", body, { key: apiKey, headers: { "idempotency-key": key } });
    assert.equal(within.json.id, first.json.id);
    await db.query("update metering.idempotency_keys set created_at = now() - interval '24 hours 1 second' where key_id = $1", [keyId]);
    await waitFor(
      "the sweep removes the record",
      async () => (await db.query("select 1 from metering.idempotency_keys where key_id = $1", [keyId])).rowCount === 0,
      15_000,
    );
    const after = await second.post("/v1/render", body, { key: apiKey, headers: { "idempotency-key": key } });
    assert.equal(after.status, 202);
    assert.notEqual(after.json.id, first.json.id, "a new job");
    assert.equal(after.headers["idempotent-replayed"], undefined);
  });

  endOfSuiteChecks(() => h);
});

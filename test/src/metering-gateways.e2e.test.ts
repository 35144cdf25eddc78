import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { distinctFreePorts, serviceEnv, startService, stopChild, waitReady, type ServiceName, type ServiceProcess, type StackPorts } from "@pressroom/stack";
import { Api, errorShape, type ApiResponse } from "./test-support/api";
import { OpenApiChecker } from "./test-support/openapi";
import { WITHOUT_RENDER, startHarness, type Harness } from "./test-support/harness";

/**
 * Limits over HTTP with two gateway processes and two metering processes:
 * gateway A talks to metering A, gateway B to metering B, both replicas of
 * each share PostgreSQL and NATS. Every test fires real parallel HTTP
 * requests, half to each gateway. No render pool: accepted async jobs stay
 * queued and hold their slot, which keeps the counts deterministic.
 */

const WEBHOOK = "https://hooks.example.com/pressroom";
const render = (i: number) => ({ html: "<p>Hello {{n}}</p>", data: { n: i }, webhook_url: WEBHOOK });

function expectError(response: ApiResponse, status: number, code: string): { error: string; code: string; hint: string } {
  assert.equal(response.status, status, `expected ${status} ${code}, got ${response.status} ${response.text}`);
  const body = errorShape(response);
  assert.equal(body.code, code, response.text);
  return body;
}

function rateHeaders(response: ApiResponse): { limit: number; remaining: number; reset: number } {
  for (const name of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"])
    assert.match(response.headers[name] ?? "", /^\d+$/, `${name} on ${response.status}`);
  return {
    limit: Number(response.headers["ratelimit-limit"]),
    remaining: Number(response.headers["ratelimit-remaining"]),
    reset: Number(response.headers["ratelimit-reset"]),
  };
}

function retryAfter(response: ApiResponse): number {
  assert.match(response.headers["retry-after"] ?? "", /^\d+$/, `Retry-After on a ${response.status}`);
  const seconds = Number(response.headers["retry-after"]);
  assert.ok(seconds >= 1, `Retry-After ${seconds}`);
  return seconds;
}

describe("limits over HTTP with two gateways and two metering processes", () => {
  let h: Harness;
  let workDir: string;
  let second: Api;
  const extra: ServiceProcess[] = [];
  /** Request i goes to gateway i mod 2. */
  const gateway = (i: number) => (i % 2 === 0 ? h.api : second);
  const statuses = (responses: ApiResponse[]) =>
    responses.reduce<Record<string, number>>((acc, r) => {
      const key = r.status < 400 ? String(r.status) : `${r.status} ${String((r.json as { code?: string } | undefined)?.code)}`;
      acc[key] = (acc[key] ?? 0) + 1;
      return acc;
    }, {});

  async function startExtra(name: ServiceName, ports: StackPorts): Promise<void> {
    const env = serviceEnv(name, {
      databaseUrls: h.stack.databaseUrls,
      natsUrl: h.stack.natsUrl,
      ports,
      logDir: workDir,
      certificates: h.stack.certificates,
      sealingKey: h.stack.sealingKey,
      destinationSealingKey: h.stack.destinationSealingKey,
      publicBaseUrl: h.stack.baseUrl,
      env: { LOG_LEVEL: "info" },
    });
    const proc = startService(name, env, path.join(workDir, `${name}-b`));
    extra.push(proc);
    await waitReady(name, ports.health[name], proc.child).catch((err: Error) => {
      throw new Error(`${err.message}\n${proc.output.join("").slice(-3000)}`);
    });
  }

  before(async () => {
    h = await startHarness({ only: WITHOUT_RENDER });
    workDir = mkdtempSync(path.join(tmpdir(), "pressroom-replicas-"));
    const [grpcB, healthB, httpB, gatewayHealthB] = (await distinctFreePorts(4)) as [number, number, number, number];
    const meteringB = { grpc: grpcB, health: healthB };
    const ports: StackPorts = {
      http: httpB,
      grpc: { ...h.stack.ports.grpc, metering: meteringB.grpc },
      health: { ...h.stack.ports.health, metering: meteringB.health, gateway: gatewayHealthB },
    };
    await startExtra("metering", ports);
    await startExtra("gateway", ports);
    second = new Api(`http://127.0.0.1:${httpB}`);
  });

  after(async () => {
    for (const proc of extra) await stopChild(proc.child, "SIGTERM", 10_000);
    await h?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it("runs two gateways on two metering processes", async () => {
    assert.equal(extra.length, 2);
    for (const api of [h.api, second]) assert.equal((await api.get("/livez")).status, 200);
    const { apiKey } = await h.admin.createKey("free");
    const a = rateHeaders(await gateway(0).get("/v1/keys/usage", { key: apiKey }));
    const b = rateHeaders(await gateway(1).get("/v1/keys/usage", { key: apiKey }));
    assert.deepEqual([a.remaining, b.remaining], [9, 8], "one window, whichever gateway and metering answer");
  });

  it("quota: with R renders left, N > R parallel renders give exactly R accepted, the rest 429 QUOTA_EXCEEDED", async () => {
    const { apiKey, keyId } = await h.admin.createKey("business");
    const LEFT = 6;
    await h.admin.setUsed(keyId, "business", 100_000 - LEFT);
    const responses = await Promise.all(Array.from({ length: 16 }, (_, i) => gateway(i).post("/v1/render", render(i), { key: apiKey })));
    assert.deepEqual(statuses(responses), { "202": LEFT, "429 QUOTA_EXCEEDED": 16 - LEFT });
    for (const response of responses) {
      rateHeaders(response);
      if (response.status !== 429) continue;
      const body = expectError(response, 429, "QUOTA_EXCEEDED");
      assert.match(body.hint, /POST \/v1\/billing\/checkout/);
      assert.ok(retryAfter(response) > 60, "until the next month");
    }
    const usage = await gateway(1).get("/v1/keys/usage", { key: apiKey });
    assert.deepEqual(usage.json.renders, { used: 100_000, limit: 100_000, remaining: 0 });
    assert.deepEqual(usage.json.concurrency, { limit: 10, in_flight: LEFT });
  });

  it("concurrency: N parallel renders over the plan's slots give exactly that many accepted, the rest 429 CONCURRENCY_EXCEEDED", async () => {
    const { apiKey } = await h.admin.createKey("pro");
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => gateway(i).post("/v1/render", render(i), { key: apiKey })));
    assert.deepEqual(statuses(responses), { "202": 5, "429 CONCURRENCY_EXCEEDED": 15 });
    for (const response of responses.filter((r) => r.status === 429)) {
      assert.match(expectError(response, 429, "CONCURRENCY_EXCEEDED").error, /in flight/);
      retryAfter(response);
      rateHeaders(response);
    }
    const usage = await gateway(0).get("/v1/keys/usage", { key: apiKey });
    assert.deepEqual(usage.json.concurrency, { limit: 5, in_flight: 5 });
    assert.deepEqual(usage.json.renders, { used: 5, limit: 10_000, remaining: 9_995 }, "refusals take no quota");
  });

  it("rate: N parallel requests over the per-minute limit give exactly the limit through, the rest 429 RATE_LIMITED", async () => {
    const { apiKey } = await h.admin.createKey("free");
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => gateway(i).get("/v1/keys/usage", { key: apiKey })));
    assert.deepEqual(statuses(responses), { "200": 10, "429 RATE_LIMITED": 20 });
    const passed = responses.filter((r) => r.status === 200).map(rateHeaders);
    assert.deepEqual(
      passed.map((r) => r.remaining).sort((a, b) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      "each request saw its own place in the window",
    );
    for (const response of responses.filter((r) => r.status === 429)) {
      expectError(response, 429, "RATE_LIMITED");
      const wait = retryAfter(response);
      assert.ok(wait >= 58 && wait <= 60, `Retry-After ${wait}`);
      const headers = rateHeaders(response);
      assert.deepEqual([headers.limit, headers.remaining], [10, 0]);
      assert.equal(headers.reset, wait, "RateLimit-Reset and Retry-After agree on a refusal");
    }
  });

  it("the 429s stay distinct under one burst of renders: rate first, then quota, then concurrency", async () => {
    const { apiKey, keyId } = await h.admin.createKey("free");
    await h.admin.setUsed(keyId, "free", 98);
    // free: 10 requests a minute, 100 renders a month (2 left), 1 render at a time:
    // one accepted; the other nine in the window find the slot taken (a unit is still left); the rest are over the rate.
    const responses = await Promise.all(Array.from({ length: 24 }, (_, i) => gateway(i).post("/v1/render", render(i), { key: apiKey })));
    assert.deepEqual(statuses(responses), { "202": 1, "429 CONCURRENCY_EXCEEDED": 9, "429 RATE_LIMITED": 14 });
    for (const response of responses.filter((r) => r.status === 429)) retryAfter(response);
    // The last unit: the slot is still held, so quota is checked first and refuses once the unit is gone.
    const other = await h.admin.createKey("business");
    await h.admin.setUsed(other.keyId, "business", 100_000 - 1);
    const burst = await Promise.all(Array.from({ length: 6 }, (_, i) => gateway(i).post("/v1/render", render(i), { key: other.apiKey })));
    assert.deepEqual(statuses(burst), { "202": 1, "429 QUOTA_EXCEEDED": 5 });
  });

  it("GET /v1/keys/usage agrees with the headers of the same response and with what was admitted", async () => {
    const { apiKey } = await h.admin.createKey("starter");
    await gateway(0).post("/v1/render", render(0), { key: apiKey });
    await gateway(1).post("/v1/render", { html: "<p>x</p>", data: 7 }, { key: apiKey });
    for (let i = 0; i < 4; i++) await gateway(i).get("/v1/keys/usage", { key: apiKey });
    const response = await gateway(1).get("/v1/keys/usage", { key: apiKey });
    assert.equal(response.status, 200);
    const headers = rateHeaders(response);
    const body = response.json;
    assert.deepEqual(Object.keys(body).sort(), ["concurrency", "period", "plan", "previews", "rate_limit", "renders", "test"]);
    assert.equal(body.plan, "starter");
    assert.equal(body.rate_limit.limit, headers.limit);
    assert.equal(body.rate_limit.remaining, headers.remaining);
    assert.equal(body.rate_limit.remaining, 60 - 7, "every keyed request counted, the invalid one too");
    assert.ok(Math.abs(body.rate_limit.reset_seconds - headers.reset) <= 1);
    assert.equal(body.rate_limit.window_seconds, 60);
    assert.deepEqual(body.renders, { used: 1, limit: 1_000, remaining: 999 });
    assert.deepEqual(body.previews, { used: 0, limit: 3_000, remaining: 3_000 });
    assert.deepEqual(body.concurrency, { limit: 2, in_flight: 1 });
    const now = new Date();
    assert.equal(body.period.start, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString());
    assert.equal(body.period.end, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString());
  });

  it("every response seen on either gateway matches the OpenAPI document", async () => {
    const checker = await OpenApiChecker.fetch(h.stack.baseUrl);
    const { problems } = checker.checkAll([...h.api.exchanges, ...second.exchanges]);
    assert.ok(second.exchanges.length > 20);
    assert.deepEqual(problems, []);
  });

  it("no key reaches any process's output, on either replica", () => {
    const logs = h.stack.output() + extra.map((p) => p.output.join("")).join("");
    const secrets = [...h.api.secrets(), ...second.secrets()];
    assert.ok(secrets.length > 0);
    assert.deepEqual(
      secrets.filter((secret) => logs.includes(secret)),
      [],
    );
    assert.ok(!/\bpr_live_[0-9A-Za-z]{20,}/.test(logs));
  });
});

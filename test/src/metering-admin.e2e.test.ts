import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { accountEventsV1 } from "@pressroom/contracts";
import { grpcTlsEnv, streams } from "@pressroom/platform";
import { REPO_ROOT } from "@pressroom/stack";
import { connect, type NatsConnection } from "nats";
import { errorShape } from "./test-support/api";
import { WITHOUT_RENDER, startHarness, type Harness } from "./test-support/harness";

/**
 * Operators see and correct a key's standing with the CLI
 * (`pressroom-admin usage show|set`), run as its own process against the
 * stack's identity and metering; a correction is an account.usage_corrected
 * event and takes effect on the next request.
 */

const CLI = path.join(REPO_ROOT, "packages", "admin", "dist", "cli.js");
const WEBHOOK = "https://hooks.example.com/pressroom";

describe("pressroom-admin usage show / usage set", () => {
  let h: Harness;
  let nc: NatsConnection;

  function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: {
          PATH: process.env.PATH,
          IDENTITY_ADDR: `127.0.0.1:${h.stack.ports.grpc.identity}`,
          METERING_ADDR: `127.0.0.1:${h.stack.ports.grpc.metering}`,
          ...grpcTlsEnv(h.stack.certificates.admin),
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      child.once("error", reject);
      child.once("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  }

  async function usageCorrections(keyId: string): Promise<accountEventsV1.AccountEvent[]> {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info(streams.ACCOUNTS);
    const events: accountEventsV1.AccountEvent[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const message = await jsm.streams.getMessage(streams.ACCOUNTS, { seq }).catch(() => undefined);
      if (!message) continue;
      const event = accountEventsV1.AccountEvent.decode(message.data);
      if (event.keyId === keyId && event.type === "account.usage_corrected") {
        assert.equal(message.header.get("Nats-Msg-Id"), event.id);
        events.push(event);
      }
    }
    return events;
  }

  before(async () => {
    h = await startHarness({ only: WITHOUT_RENDER });
    nc = await connect({ servers: h.stack.natsUrl });
  });

  after(async () => {
    await nc?.close();
    await h?.stop();
  });

  it("usage show prints the key's standing as GET /v1/keys/usage answers it, by key or key id, without the key", async () => {
    const { apiKey, keyId } = await h.admin.createKey("starter");
    assert.equal((await h.api.post("/v1/render", { html: "<p>x</p>", data: {}, webhook_url: WEBHOOK }, { key: apiKey })).status, 202);
    for (const ref of [apiKey, keyId]) {
      const shown = await admin("usage", "show", ref);
      assert.equal(shown.code, 0, shown.stderr);
      assert.ok(!shown.stdout.includes(apiKey), "the key is never printed");
      const { key_id, ...usage } = JSON.parse(shown.stdout);
      assert.equal(key_id, keyId);
      const api = (await h.api.get("/v1/keys/usage", { key: apiKey })).json as Record<string, unknown>;
      assert.deepEqual(Object.keys(usage), Object.keys(api), "the API's fields, in its order");
      assert.equal(usage.plan, "starter");
      assert.deepEqual(usage.renders, { used: 1, limit: 1000, remaining: 999 });
      assert.deepEqual(usage.concurrency, { limit: 2, in_flight: 1 });
      assert.deepEqual(usage.period, api.period);
      assert.equal(usage.rate_limit.limit, 60);
      assert.ok(usage.rate_limit.remaining <= 59);
      const now = new Date();
      assert.equal(usage.period.start, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString());
    }
  });

  it("keys create makes a free-plan key unless --plan says another", async () => {
    const created = await admin("keys", "create", "--email", "cli-default@example.com");
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /\(free\)/);
    const apiKey = created.stdout.trim();
    assert.equal(((await h.api.get("/v1/keys/usage", { key: apiKey })).json as { plan: string }).plan, "free");
    const pro = await admin("keys", "create", "--email", "cli-pro@example.com", "--plan", "pro");
    assert.equal(pro.code, 0, pro.stderr);
    assert.equal(((await h.api.get("/v1/keys/usage", { key: pro.stdout.trim() })).json as { plan: string }).plan, "pro");
  });

  it("usage set corrects renders used, records account.usage_corrected (who, from, to, when), and the limits follow at once", async () => {
    const { apiKey, keyId } = await h.admin.createKey("free");
    await h.api.post("/v1/render", { html: "<p>x</p>", data: {}, webhook_url: WEBHOOK }, { key: apiKey });

    const full = await admin("usage", "set", keyId, "--used", "100");
    assert.equal(full.code, 0, full.stderr);
    assert.deepEqual(JSON.parse(full.stdout), { key_id: keyId, from: 1, to: 100 });
    const refused = await h.api.post("/v1/render", { html: "<p>x</p>", data: {}, webhook_url: WEBHOOK }, { key: apiKey });
    assert.equal(refused.status, 429);
    assert.equal(errorShape(refused).code, "QUOTA_EXCEEDED");
    assert.deepEqual((await h.api.get("/v1/keys/usage", { key: apiKey })).json.renders, { used: 100, limit: 100, remaining: 0 });

    const corrected = await admin("usage", "set", apiKey, "--used", "7");
    assert.equal(corrected.code, 0, corrected.stderr);
    assert.deepEqual(JSON.parse(corrected.stdout), { key_id: keyId, from: 100, to: 7 });
    assert.deepEqual((await h.api.get("/v1/keys/usage", { key: apiKey })).json.renders, { used: 7, limit: 100, remaining: 93 });

    const events = await usageCorrections(keyId);
    assert.equal(events.length, 2);
    const now = new Date();
    const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    for (const [event, from, to] of [
      [events[0]!, "1", "100"],
      [events[1]!, "100", "7"],
    ] as const) {
      assert.equal(event.actor, "operator");
      assert.equal(event.source, "metering");
      assert.deepEqual(event.usageCorrected, { periodStart, fromUsed: from, toUsed: to });
      assert.ok(Math.abs(Date.parse(event.time) - Date.now()) < 60_000);
    }
  });

  it("refuses a malformed correction without changing anything", async () => {
    const { keyId } = await h.admin.createKey("free");
    for (const args of [
      ["usage", "set", keyId],
      ["usage", "set", keyId, "--used=-1"],
      ["usage", "set", keyId, "--used", "lots"],
    ]) {
      const result = await admin(...args);
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, /usage set needs --used <n>/);
    }
    const unknown = await admin("usage", "show", "key_doesnotexist");
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /NOT_FOUND/);
    assert.equal((await usageCorrections(keyId)).length, 0);
  });
});

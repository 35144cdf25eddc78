import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { grpcTlsEnv } from "@pressroom/platform";
import { Pressroom } from "@pressroom/client";
import { DEMO_API_KEY } from "@pressroom/domain";
import { REPO_ROOT } from "@pressroom/stack";
import pg from "pg";
import { errorShape, type ApiResponse } from "./test-support/api";
import { WITHOUT_RENDER, endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";

/**
 * Identity over HTTP against the running services: signup and its per-IP
 * throttle (socket address, or X-Forwarded-For behind a trusted proxy), keys
 * stored only as hashes, webhook secrets, the demo key, revocation and the
 * operator CLI.
 */

const SIGNUP_LIMIT = 3;
/** The gateway trusts this loopback address as a proxy; tests connect from it to act as one. */
const PROXY = "127.0.0.2";
const run = promisify(execFile);
const CLI = path.join(REPO_ROOT, "packages", "admin", "dist", "cli.js");

function expectError(response: ApiResponse, status: number, code: string): string {
  const body = errorShape(response);
  assert.equal(response.status, status, response.text);
  assert.equal(body.code, code, response.text);
  return body.error;
}

let counter = 0;
const email = (tag: string) => `${tag}-${Date.now().toString(36)}-${counter++}@example.com`;

describe("identity over HTTP", () => {
  let h: Harness;
  let db: pg.Client;

  before(async () => {
    h = await startHarness({
      only: WITHOUT_RENDER,
      serviceEnv: { identity: { SIGNUP_LIMIT_PER_HOUR: String(SIGNUP_LIMIT) }, gateway: { TRUSTED_PROXIES: PROXY } },
    });
    db = new pg.Client({ connectionString: h.stack.databaseUrl });
    await db.connect();
  });

  after(async () => {
    await db?.end();
    await h?.stop();
  });

  const signup = (address: string, options: { from?: string; xff?: string } = {}) =>
    h.api.post("/v1/signup", { email: address }, { localAddress: options.from, headers: options.xff ? { "x-forwarded-for": options.xff } : {} });

  describe("signup", () => {
    it("invalid e-mail addresses are 422 PAYLOAD_INVALID and do not count toward the throttle", async () => {
      for (const bad of [
        "",
        "plainaddress",
        "a@b",
        "@example.com",
        "ada@",
        "ada@@example.com",
        "ada example@example.com",
        "ada@exa mple.com",
        `${"a".repeat(250)}@example.com`,
        "ada@-example.com",
        '"ada"@example.com',
      ]) {
        assert.match(expectError(await signup(bad), 422, "PAYLOAD_INVALID"), /^email: /, bad);
      }
    });

    it("answers 201 {api_key, plan: free} once; the key works and is stored only as its hash", async () => {
      const address = email("ada");
      const response = await signup(address);
      assert.equal(response.status, 201, response.text);
      assert.deepEqual(Object.keys(response.json).sort(), ["api_key", "plan"]);
      assert.equal(response.json.plan, "free");
      assert.equal(response.headers["cache-control"], "no-store");
      const apiKey = response.json.api_key as string;
      assert.match(apiKey, /^pr_live_[0-9A-Za-z]{33}$/, "pr_live_ + 192 random bits in base62");

      const usage = await h.api.get("/v1/keys/usage", { key: apiKey });
      assert.equal(usage.status, 200);
      assert.equal(usage.json.plan, "free");
      assert.deepEqual([usage.json.renders.limit, usage.json.rate_limit.limit, usage.json.concurrency.limit], [100, 10, 1]);
      assert.ok(!usage.text.includes(apiKey), "the key is not shown again");

      const { rows } = await db.query("select * from identity.api_keys where lower(email) = lower($1)", [address]);
      assert.equal(rows.length, 1);
      const row = rows[0] as Record<string, unknown>;
      assert.deepEqual(row.key_hash, createHash("sha256").update(apiKey).digest(), "stored as SHA-256");
      for (const [column, value] of Object.entries(row)) {
        const text = Buffer.isBuffer(value) ? `${value.toString("hex")} ${value.toString("latin1")}` : String(value);
        assert.ok(!text.includes(apiKey.slice(8)), `column ${column} does not hold the key`);
      }
      const { rows: anywhere } = await db.query("select count(*)::int as n from identity.api_keys t where t::text like $1", [`%${apiKey.slice(8)}%`]);
      assert.equal(anywhere[0].n, 0, "no row of identity.api_keys holds the key in any column");
    });

    it("a duplicate e-mail (any case) is 409 AUTH_EMAIL_EXISTS", async () => {
      const address = email("dup");
      assert.equal((await signup(address, { from: PROXY, xff: "192.0.2.10" })).status, 201);
      assert.match(expectError(await signup(address, { from: PROXY, xff: "192.0.2.11" }), 409, "AUTH_EMAIL_EXISTS"), /already has a key/);
      expectError(await signup(address.toUpperCase(), { from: PROXY, xff: "192.0.2.12" }), 409, "AUTH_EMAIL_EXISTS");
      expectError(await signup(`  ${address}  `, { from: PROXY, xff: "192.0.2.13" }), 409, "AUTH_EMAIL_EXISTS");
    });

    it(`is throttled per socket IP (${SIGNUP_LIMIT} an hour); X-Forwarded-For from an untrusted peer is ignored`, async () => {
      // 127.0.0.1 already signed up once above; the invalid addresses did not count.
      const results: number[] = [];
      for (let i = 0; i < SIGNUP_LIMIT + 1; i++) results.push((await signup(email("sock"), { xff: `198.51.100.${50 + i}` })).status);
      assert.deepEqual(results, [201, 201, 429, 429]);
      const refused = await signup(email("sock"), { xff: "203.0.113.77" });
      assert.match(expectError(refused, 429, "SIGNUP_THROTTLED"), /too many signups/);
      const retryAfter = Number(refused.headers["retry-after"]);
      assert.ok(retryAfter > 3_500 && retryAfter <= 3_600, `Retry-After ${retryAfter}: until the oldest attempt leaves the hour`);
      assert.equal(refused.headers["ratelimit-limit"], undefined, "signup is not keyed");
    });

    it("behind a trusted proxy, the client is the right-most untrusted X-Forwarded-For address", async () => {
      const statuses = async (xff: string | undefined, n: number) => {
        const out: number[] = [];
        for (let i = 0; i < n; i++) out.push((await signup(email("proxy"), { from: PROXY, xff })).status);
        return out;
      };
      assert.deepEqual(await statuses("198.51.100.7", SIGNUP_LIMIT + 1), [201, 201, 201, 429]);
      assert.deepEqual(await statuses("198.51.100.8", 1), [201], "another client behind the proxy has its own allowance");
      assert.deepEqual(await statuses("6.6.6.6, 198.51.100.7", 1), [429], "a spoofed left-most entry changes nothing");
      assert.deepEqual(await statuses(`198.51.100.7, ${PROXY}`, 1), [429], "trusted hops are skipped");
      assert.deepEqual(await statuses(undefined, 1), [201], "without the header, the proxy itself");
      // IPv6 clients are throttled by /64.
      assert.deepEqual(await statuses("2001:db8:1:2::1", SIGNUP_LIMIT), [201, 201, 201]);
      assert.deepEqual(await statuses("2001:db8:1:2:ffff::9", 1), [429]);
      assert.deepEqual(await statuses("2001:db8:1:3::1", 1), [201]);
    });

    it("holds exactly under parallel attempts", async () => {
      const results = await Promise.all(Array.from({ length: 8 }, () => signup(email("burst"), { from: PROXY, xff: "198.51.100.200" })));
      assert.deepEqual(results.map((r) => r.status).sort(), [201, 201, 201, 429, 429, 429, 429, 429]);
    });
  });

  describe("keys", () => {
    it("the public demo key has the demo plan", async () => {
      const usage = await h.api.get("/v1/keys/usage", { key: DEMO_API_KEY });
      assert.equal(usage.status, 200, usage.text);
      assert.equal(usage.json.plan, "demo");
      assert.deepEqual([usage.json.renders.limit, usage.json.rate_limit.limit, usage.json.concurrency.limit], [50, 3, 1]);
      assert.equal(usage.headers["ratelimit-limit"], "3");
    });

    it("the public demo key's webhook secret cannot be rotated: 403 DEMO_KEY_READ_ONLY, and the secret stays", async () => {
      // The demo plan allows 3 requests a minute: the stored (sealed) secret is compared instead of asking for it twice.
      const sealed = async () =>
        (await db.query("select webhook_secret_sealed from identity.api_keys where key_id = 'key_demo'")).rows[0]?.webhook_secret_sealed as string;
      const before = await sealed();
      const response = await h.api.post("/v1/keys/webhook-secret/rotate", undefined, { key: DEMO_API_KEY });
      assert.match(expectError(response, 403, "DEMO_KEY_READ_ONLY"), /demo key/);
      assert.match(errorShape(response).hint, /\/v1\/signup/);
      assert.equal(await sealed(), before);
      const own = await h.api.post("/v1/keys/webhook-secret/rotate", undefined, { key: (await h.admin.createKey("free")).apiKey });
      assert.equal(own.status, 200, own.text);
    });

    it("each plan has the limits of the spec's table (GET /v1/keys/usage and the RateLimit headers)", async () => {
      const table: Record<string, [number, number, number]> = {
        free: [100, 10, 1],
        starter: [1_000, 60, 2],
        pro: [10_000, 300, 5],
        business: [100_000, 1_000, 10],
      };
      for (const [plan, [renders, perMinute, concurrent]] of Object.entries(table)) {
        const usage = await h.api.get("/v1/keys/usage", { key: (await h.admin.createKey(plan)).apiKey });
        assert.equal(usage.json.plan, plan);
        assert.deepEqual([usage.json.renders.limit, usage.json.rate_limit.limit, usage.json.concurrency.limit], [renders, perMinute, concurrent], plan);
        assert.equal(usage.json.rate_limit.window_seconds, 60);
        assert.equal(usage.headers["ratelimit-limit"], String(perMinute));
        assert.equal(usage.headers["ratelimit-remaining"], String(perMinute - 1), "this request counted");
      }
    });

    it("keys are distinct and random; each key's webhook secret is whsec_ + 32 random bytes, made with the key", async () => {
      const keys = await Promise.all(Array.from({ length: 12 }, () => h.admin.createKey("pro")));
      assert.equal(new Set(keys.map((k) => k.apiKey)).size, keys.length);
      const secrets: string[] = [];
      for (const { apiKey, keyId } of keys.slice(0, 4)) {
        const { rows } = await db.query("select webhook_secret, webhook_secret_sealed from identity.api_keys where key_id = $1", [keyId]);
        const stored = rows[0] as { webhook_secret: string | null; webhook_secret_sealed: string };
        const response = await h.api.get("/v1/keys/webhook-secret", { key: apiKey });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(Object.keys(response.json), ["secret"]);
        assert.equal(response.headers["cache-control"], "no-store");
        const secret = response.json.secret as string;
        assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
        assert.equal(Buffer.from(secret.slice(6), "base64url").length, 32);
        assert.equal(stored.webhook_secret, null, "never stored in plaintext");
        assert.match(stored.webhook_secret_sealed, /^v1\./, "created (sealed) with the key, before anyone asked for it");
        assert.ok(!stored.webhook_secret_sealed.includes(secret.slice(6, 30)));
        assert.equal((await h.api.get("/v1/keys/webhook-secret", { key: apiKey })).json.secret, secret, "stable");
        secrets.push(secret);
      }
      assert.equal(new Set(secrets).size, secrets.length, "one secret per key");
    });

    it("a revoked key is 401 everywhere within 5 s (the gateway caches authentication for 2 s)", async () => {
      const { apiKey, keyId } = await h.admin.createKey("business");
      const job = await h.api.post("/v1/render", { html: "<p>x</p>", data: {}, webhook_url: "https://hooks.example.com/x" }, { key: apiKey });
      assert.equal(job.status, 202);
      assert.equal((await h.api.get("/v1/keys/usage", { key: apiKey })).status, 200, "authenticated and cached");
      await h.admin.revoke(keyId);
      const revokedAt = Date.now();
      let status = 200;
      while (status !== 401 && Date.now() - revokedAt < 6_000) {
        status = (await h.api.get("/v1/keys/usage", { key: apiKey })).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 100));
      }
      const took = Date.now() - revokedAt;
      assert.equal(status, 401);
      assert.ok(took < 5_000, `revocation took ${took} ms`);
      const everywhere: [string, string, unknown?][] = [
        ["POST", "/v1/render", { html: "<p>x</p>", data: {} }],
        ["POST", "/v1/image", { template_id: "social-card", data: {} }],
        ["GET", "/v1/keys/usage"],
        ["GET", "/v1/keys/webhook-secret"],
        ["POST", "/v1/billing/checkout", { plan: "pro" }],
        ["GET", `/v1/jobs/${job.json.id}`],
      ];
      for (const [method, p, json] of everywhere) expectError(await h.api.request(method, p, { key: apiKey, json }), 401, "AUTH_INVALID");
    });

    it("POST /v1/keys/rotate: 201 {api_key, previous_key_expires_at}; the new key works at once, the old one until then, and is refused after", async () => {
      const { apiKey: old, keyId } = await h.admin.createKey("pro");
      const rotated = await h.api.post("/v1/keys/rotate", undefined, { key: old });
      assert.equal(rotated.status, 201, rotated.text);
      assert.deepEqual(Object.keys(rotated.json).sort(), ["api_key", "previous_key_expires_at"]);
      assert.equal(rotated.headers["cache-control"], "no-store");
      const fresh = rotated.json.api_key as string;
      h.api.remember(fresh);
      assert.match(fresh, /^pr_live_[0-9A-Za-z]{33}$/);
      assert.notEqual(fresh, old);
      const hoursLeft = (Date.parse(rotated.json.previous_key_expires_at) - Date.now()) / 3_600_000;
      assert.ok(hoursLeft > 23.9 && hoursLeft <= 24, `the old key works ${hoursLeft} h more`);

      const stored = (await db.query("select key_hash, previous_key_hash from identity.api_keys where key_id = $1", [keyId])).rows[0];
      assert.deepEqual(stored.key_hash, createHash("sha256").update(fresh).digest(), "the new key is stored only as its hash");
      assert.deepEqual(stored.previous_key_hash, createHash("sha256").update(old).digest());

      // Both are the same account: the new key's usage sees the old one's requests, and the webhook secret is the key's.
      const byNew = await h.api.get("/v1/keys/usage", { key: fresh });
      assert.equal(byNew.status, 200, byNew.text);
      assert.equal(byNew.json.plan, "pro");
      const byOld = await h.api.get("/v1/keys/usage", { key: old });
      assert.equal(byOld.status, 200, "the old key works until previous_key_expires_at");
      assert.equal(byOld.json.rate_limit.remaining, byNew.json.rate_limit.remaining - 1, "one account, one rate limit");
      assert.equal(
        (await h.api.get("/v1/keys/webhook-secret", { key: fresh })).json.secret,
        (await h.api.get("/v1/keys/webhook-secret", { key: old })).json.secret,
      );

      // The 24 hours pass: the old key is refused, the new one still works.
      await db.query("update identity.api_keys set previous_key_expires_at = now() - interval '1 second' where key_id = $1", [keyId]);
      const expiredAt = Date.now();
      let status = 200;
      while (status !== 401 && Date.now() - expiredAt < 6_000) {
        status = (await h.api.get("/v1/keys/usage", { key: old })).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 100));
      }
      expectError(await h.api.get("/v1/keys/usage", { key: old }), 401, "AUTH_INVALID");
      expectError(await h.api.post("/v1/keys/rotate", undefined, { key: old }), 401, "AUTH_INVALID");
      assert.equal((await h.api.get("/v1/keys/usage", { key: fresh })).status, 200);
    });

    it("a second rotation ends the older key at once; the public demo key cannot be rotated (403 DEMO_KEY_READ_ONLY)", async () => {
      const { apiKey: first } = await h.admin.createKey("pro");
      const second = (await h.api.post("/v1/keys/rotate", undefined, { key: first })).json.api_key as string;
      h.api.remember(second);
      const third = await h.api.post("/v1/keys/rotate", undefined, { key: second });
      assert.equal(third.status, 201, third.text);
      h.api.remember(third.json.api_key);
      const started = Date.now();
      let status = 200;
      while (status !== 401 && Date.now() - started < 6_000) {
        status = (await h.api.get("/v1/keys/usage", { key: first })).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 401, "the key two rotations back is refused");
      assert.equal((await h.api.get("/v1/keys/usage", { key: second })).status, 200, "the one just replaced works");
      assert.equal((await h.api.get("/v1/keys/usage", { key: third.json.api_key })).status, 200);

      // The JavaScript client's rotateKey: the key it holds stays valid, the new one works at once.
      const viaClient = await new Pressroom({ apiKey: third.json.api_key, baseUrl: h.stack.baseUrl }).rotateKey();
      h.api.remember(viaClient.api_key);
      assert.match(viaClient.api_key, /^pr_live_[0-9A-Za-z]{33}$/);
      assert.ok(Date.parse(viaClient.previous_key_expires_at) > Date.now() + 23.9 * 3_600_000);
      assert.equal((await new Pressroom({ apiKey: viaClient.api_key, baseUrl: h.stack.baseUrl }).usage()).plan, "pro");
      assert.equal((await h.api.get("/v1/keys/usage", { key: third.json.api_key })).status, 200);

      const hashBefore = (await db.query("select key_hash from identity.api_keys where key_id = 'key_demo'")).rows[0]?.key_hash as Buffer;
      const demo = await h.api.post("/v1/keys/rotate", undefined, { key: DEMO_API_KEY });
      assert.match(expectError(demo, 403, "DEMO_KEY_READ_ONLY"), /demo key/);
      assert.match(errorShape(demo).hint, /\/v1\/signup/);
      assert.deepEqual((await db.query("select key_hash, previous_key_hash from identity.api_keys where key_id = 'key_demo'")).rows[0], {
        key_hash: hashBefore,
        previous_key_hash: null,
      });
    });

    it("the operator CLI needs the admin certificate: another service's is refused, a missing one is named", async () => {
      const base = { PATH: process.env.PATH, IDENTITY_ADDR: `127.0.0.1:${h.stack.ports.grpc.identity}` };
      const create = (env: NodeJS.ProcessEnv) => run(process.execPath, [CLI, "keys", "create", "--email", email("nocert"), "--plan", "business"], { env });
      await assert.rejects(create({ ...base, ...grpcTlsEnv(h.stack.certificates.gateway) }), (err: { code: number; stdout: string; stderr: string }) => {
        assert.equal(err.code, 1);
        assert.equal(err.stdout, "", "no key");
        assert.match(err.stderr, /gRPC status 7: gateway may not call \/pressroom\.identity\.v1\.IdentityService\/CreateKey/);
        return true;
      });
      await assert.rejects(create({ ...base, GRPC_TLS_CA: "/nonexistent/ca.crt" }), (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 1);
        assert.match(err.stderr, /GRPC_TLS_CA: cannot read the CA certificate/);
        return true;
      });
    });

    it("the operator CLI creates a key (printed on its own line), changes its plan and revokes it", async () => {
      const env = {
        ...process.env,
        IDENTITY_ADDR: `127.0.0.1:${h.stack.ports.grpc.identity}`,
        METERING_ADDR: `127.0.0.1:${h.stack.ports.grpc.metering}`,
        ...grpcTlsEnv(h.stack.certificates.admin),
      };
      const cli = (...args: string[]) => run(process.execPath, [CLI, ...args], { env });

      const address = email("ops");
      const created = await cli("keys", "create", "--email", address, "--plan", "business");
      const lines = created.stdout.split("\n").filter(Boolean);
      assert.equal(lines.length, 1, `stdout is the key alone: ${JSON.stringify(created.stdout)}`);
      const apiKey = lines[0]!;
      h.api.remember(apiKey);
      assert.match(apiKey, /^pr_live_[0-9A-Za-z]{33}$/);
      assert.equal(created.stdout, `${apiKey}\n`);
      assert.match(created.stderr, /created key_[0-9a-z]+ \(business\)/);
      assert.ok(!created.stderr.includes(apiKey));
      const usage = await h.api.get("/v1/keys/usage", { key: apiKey });
      assert.equal(usage.json.plan, "business");

      const changed = await cli("keys", "set-plan", apiKey, "pro");
      assert.deepEqual({ ...JSON.parse(changed.stdout), key_id: undefined }, { key_id: undefined, from: "business", to: "pro" });
      assert.ok(!changed.stdout.includes(apiKey));
      const deadline = Date.now() + 5_000;
      let plan = "business";
      while (plan !== "pro" && Date.now() < deadline) {
        plan = (await h.api.get("/v1/keys/usage", { key: apiKey })).json.plan;
        if (plan !== "pro") await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(plan, "pro", "the new plan applies within the auth cache time");

      await assert.rejects(cli("keys", "create", "--email", email("gold"), "--plan", "gold"), (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 1);
        assert.match(err.stderr, /PLAN_INVALID/);
        return true;
      });
      await assert.rejects(cli("keys", "create", "--email", address, "--plan", "pro"), /AUTH_EMAIL_EXISTS/);

      const revoked = await cli("keys", "revoke", apiKey);
      assert.equal(JSON.parse(revoked.stdout).revoked, true);
      const revokedAt = Date.now();
      let status = 200;
      while (status !== 401 && Date.now() - revokedAt < 6_000) {
        status = (await h.api.get("/v1/keys/usage", { key: apiKey })).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 401);
      assert.ok(Date.now() - revokedAt < 5_000);
      await assert.rejects(cli("keys", "revoke", DEMO_API_KEY), /demo key cannot be revoked/);
    });
  });

  endOfSuiteChecks(() => h);
});

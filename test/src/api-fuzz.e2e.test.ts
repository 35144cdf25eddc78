import assert from "node:assert/strict";
import { Agent, request as httpRequest } from "node:http";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { startHarness, type Harness } from "./test-support/harness";

/**
 * Property-based fuzz of the public HTTP API: 10,000 generated requests
 * (method, path, query string, headers, body) against a real gateway and the
 * services behind it (all six, so template lookups are real). Property: never a 5xx, and every error is JSON with
 * exactly {"error","code","hint"}, all strings. The keys are business keys
 * with their monthly quota used up (valid render bodies are answered 429
 * QUOTA_EXCEEDED instead of launching renders) spread over enough keys that
 * the rate limit leaves most requests to reach validation.
 */

const RUNS = 1_250;
const BATCH = 8;
const KEYS = 16;
const TEMPLATE_IDS = ["invoice", "receipt", "social-card", "og-image", "letter", "nope", "INVOICE", "-x", "a".repeat(65)];
const PATHS = [
  "/v1/render",
  "/v1/image",
  "/v1/billing/checkout",
  "/v1/keys/usage",
  "/v1/keys/webhook-secret",
  "/v1/keys/webhook-secret/rotate",
  "/v1/templates",
  "/v1/templates/invoice/preview.png",
  "/v1/signup",
  "/v1/jobs/job_00000000000000000000000000",
  "/v1/outputs/out_00000000000000000000000000",
  "/v1/billing/checkout/chk_00000000000000000000000000",
  "/v1/billing/stripe/webhook",
  "/v1/openapi.json",
];

interface Case {
  method: string;
  path: string;
  query: string;
  auth: number;
  contentType: string | undefined;
  idempotencyKey: string | undefined;
  body: string | undefined;
}

const visibleOrLatin1 = fc.string({
  unit: fc
    .integer({ min: 0x20, max: 0xff })
    .filter((c) => c !== 0x7f)
    .map((c) => String.fromCharCode(c)),
  maxLength: 300,
});

const pathArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...PATHS) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...PATHS), fc.string({ maxLength: 40 })).map(([p, extra]) => `${p}/${encodeURIComponent(extra)}`) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.oneof(fc.string({ maxLength: 12 }).map(encodeURIComponent), fc.constantFrom("%", "%zz", "..", "%00", "%C0%AF", "v1")), { maxLength: 5 })
      .map((parts) => `/${parts.join("/")}`),
  },
);

const queryArb = fc.oneof(
  fc.constant(""),
  fc.dictionary(fc.string({ maxLength: 10 }), fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom("1", "9999999999", "-1"))).map((q) =>
    Object.entries(q)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
      .join("&"),
  ),
  fc.constantFrom("exp=1&sig=zz", "exp=abc", "sig=%", "%%", "a=%ZZ", "&&&", "exp=99999999999999999999&sig=" + "0".repeat(64)),
);

const webhookArb = fc.oneof(
  fc.webUrl(),
  fc.string({ maxLength: 50 }),
  fc.constantFrom("https://hooks.example.com/x", "https://a.test:8443/", "https://user:pw@a.test/", "http://a.test/", "https://" + "a".repeat(2100)),
);

const dataArb = fc.oneof({ weight: 4, arbitrary: fc.object({ maxDepth: 4 }) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) });

const jobBodyArb = fc.record(
  {
    template_id: fc.oneof(fc.constantFrom(...TEMPLATE_IDS), fc.string({ maxLength: 70 }), fc.integer()),
    html: fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom("<p>{{name}}</p>", "{{#each}}", "{{> partial}}", "<script>throw 1</script>", "")),
    data: dataArb,
    webhook_url: webhookArb,
    plan: fc.constantFrom("starter", "pro", "business", "free", "demo", "gold"),
    email: fc.oneof(fc.emailAddress(), fc.string({ maxLength: 30 })),
    extra: fc.anything({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);

const nested = (depth: number, open: string, close: string) => `${open.repeat(depth)}${close.repeat(depth)}`;

const bodyArb = fc.oneof(
  { weight: 6, arbitrary: jobBodyArb.map((b) => JSON.stringify(b)) },
  { weight: 2, arbitrary: fc.json({ maxDepth: 4 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "",
      "{",
      "nul",
      "{}",
      "[]",
      "null",
      '{"data":' + nested(70, "[", "]") + "}",
      nested(5_000, '{"a":', "}"),
      `{"html":"<p>x</p>","data":${nested(20_000, '{"k":', "}").replace('{"k":}', '{"k":1}')}}`,
      '{"html":"\\ud800"}',
      "\u0000",
      '{"a":1,"a":2}',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 100 }).map((depth) => `{"html":"<p>x</p>","data":${nested(depth, '{"k":', "}").replace(/\{"k":\}/, '{"k":1}')}}`),
  },
);

const caseArb: fc.Arbitrary<Case> = fc.record({
  method: fc.oneof(
    { weight: 8, arbitrary: fc.constant("POST") },
    { weight: 3, arbitrary: fc.constant("GET") },
    { weight: 1, arbitrary: fc.constantFrom("PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "FOO") },
  ),
  path: pathArb,
  query: queryArb,
  auth: fc.integer({ min: -4, max: KEYS - 1 }),
  contentType: fc.option(
    fc.constantFrom(
      "application/json",
      "application/json; charset=utf-8",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/json; charset=utf-16",
      "garbage/",
    ),
    { nil: undefined, freq: 8 },
  ),
  idempotencyKey: fc.option(fc.oneof(fc.uuid(), visibleOrLatin1), { nil: undefined, freq: 2 }),
  body: fc.option(bodyArb, { nil: undefined, freq: 10 }),
});

describe("fuzz: 10,000 generated requests against the gateway", () => {
  let h: Harness;
  let keys: string[];
  const agent = new Agent({ keepAlive: true, maxSockets: BATCH });
  let port: number;

  before(async () => {
    // The render service runs for its template catalog; the used-up quotas keep its pool idle.
    h = await startHarness({ env: { RENDER_SLOTS: "1" }, serviceEnv: { gateway: { SYNC_WAIT_MS: "1000" }, identity: { SIGNUP_LIMIT_PER_HOUR: "3" } } });
    port = h.stack.ports.http;
    keys = [];
    for (let i = 0; i < KEYS; i++) {
      const { apiKey, keyId } = await h.admin.createKey("business");
      await h.admin.setUsed(keyId, "business", 100_000);
      keys.push(apiKey);
    }
  });

  after(async () => {
    agent.destroy();
    await h?.stop();
  });

  function authorization(auth: number): string | undefined {
    if (auth >= 0) return `Bearer ${keys[auth]}`;
    return [undefined, "Bearer pr_live_000000000000000000000000000000", "Basic dXNlcjpwdw==", "Bearer"][-auth - 1];
  }

  function send(c: Case): Promise<{ status: number; type: string; body: string }> {
    const headers: Record<string, string> = {};
    const auth = authorization(c.auth);
    if (auth) headers.authorization = auth;
    if (c.contentType) headers["content-type"] = c.contentType;
    if (c.idempotencyKey !== undefined) headers["idempotency-key"] = c.idempotencyKey;
    const body = c.body === undefined ? undefined : Buffer.from(c.body, "utf8");
    if (body) headers["content-length"] = String(body.length);
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port, method: c.method, path: `${c.path}${c.query ? `?${c.query}` : ""}`, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, type: res.headers["content-type"] ?? "", body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  function check(c: Case, response: { status: number; type: string; body: string }): void {
    const where = `${c.method} ${c.path}${c.query ? `?${c.query}` : ""} → ${response.status} ${response.body.slice(0, 300)}`;
    assert.ok(response.status < 500, `no 5xx: ${where}`);
    if (response.status < 400) return;
    assert.match(response.type, /^application\/json/, `JSON error: ${where}`);
    const parsed = JSON.parse(response.body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed).sort(), ["code", "error", "hint"], `three fields: ${where}`);
    for (const field of ["error", "code", "hint"]) assert.equal(typeof parsed[field], "string", `${field} is a string: ${where}`);
    assert.match(parsed.code as string, /^[A-Z_]+$/, where);
  }

  it("never answers 5xx, and every error is exactly {error, code, hint}", async () => {
    let sent = 0;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.array(caseArb, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        const responses = await Promise.all(batch.map(send));
        sent += batch.length;
        batch.forEach((c, i) => {
          const response = responses[i]!;
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          check(c, response);
        });
      }),
      { numRuns: RUNS, endOnFailure: true, includeErrorInReport: true },
    );
    assert.equal(sent, RUNS * BATCH);
    const refusedForRate = [...statuses].filter(([status]) => status === 429).reduce((n, [, count]) => n + count, 0);
    assert.ok(refusedForRate < sent / 2, `most requests reach validation (${refusedForRate} of ${sent} were 429)`);
    assert.ok((statuses.get(422) ?? 0) > 1_000, "validation was exercised");
  });
});

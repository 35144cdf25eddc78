import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Pressroom } from "@pressroom/client";
import { DEMO_API_KEY } from "@pressroom/domain";
import { status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";
import type { GrpcPeer } from "@pressroom/platform";
import pg from "pg";
import { ConsoleSession, sessionCookie } from "./test-support/console-session";
import { clientsAs, endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

/**
 * The console's session and the API under it, from outside: the session cookie and its CSRF
 * token, sign-out and revocation; the lists (jobs, daily usage, webhook deliveries) and a
 * delivery's replay; every route refusing another account's data exactly like a missing id; and
 * the read models found again after they are lost, live and with the webhook service restarted.
 */

const ERROR_FIELDS = ["code", "error", "hint"];
const TEMPLATE = {
  id: "console-note",
  name: "Console note",
  output: "pdf",
  html: "<h1>{{title}}</h1>",
  data_schema: { type: "object", required: ["title"], properties: { title: { type: "string" } } },
  sample_data: { title: "Hello" },
};
const CARD = { id: "console-card", name: "Console card", output: "png", width: 200, height: 100, html: "<p>card</p>" };

describe("the console's session and the lists under it", () => {
  let h: Harness;
  const receiver = new WebhookReceiver();
  let a: { apiKey: string; keyId: string };
  let b: { apiKey: string; keyId: string };
  let sessionA: ConsoleSession;
  let sessionB: ConsoleSession;
  const jobsA: string[] = [];

  before(async () => {
    await receiver.start();
    h = await startHarness({
      serviceEnv: {
        webhook: receiver.env({ WEBHOOK_RETRY_BASE_MS: "200", WEBHOOK_RETRY_CAP_MS: "500" }),
        gateway: { TRUSTED_PROXIES: "127.0.0.2" },
      },
    });
    [a, b] = await Promise.all([h.admin.createKey("pro"), h.admin.createKey("pro")]);
    [sessionA, sessionB] = await Promise.all([ConsoleSession.signIn(h.api, a.apiKey), ConsoleSession.signIn(h.api, b.apiKey)]);
    receiver.on("/hook-a", (n) => ({ status: n === 0 ? 500 : 200 }));
    for (const template of [TEMPLATE, CARD]) assert.equal((await h.api.post("/v1/templates", template, { key: a.apiKey })).status, 201);
    const renders = [
      { path: "/v1/render", body: { html: "<p>{{n}}</p>", data: { n: 1 } } },
      { path: "/v1/image", body: { template_id: CARD.id, data: {} } },
      { path: "/v1/render", body: { template_id: TEMPLATE.id, data: { title: "From the template" } } },
      { path: "/v1/render", body: { html: "<script>throw new Error('boom')</script>", data: {} } },
      { path: "/v1/render", body: { html: "<p>called back</p>", data: {}, webhook_url: receiver.url("/hook-a") } },
    ];
    for (const { path, body } of renders) {
      const response = await h.api.post(path, body, { key: a.apiKey });
      assert.ok([200, 202, 422].includes(response.status), response.text);
      jobsA.push(response.json.id ?? (await newestJobId(a.apiKey, jobsA)));
    }
    await receiver.waitFor("/hook-a", 2, 30_000);
  });

  after(async () => {
    await h?.stop();
    await receiver.stop();
  });

  /** A failed sync render answers the error, not its id: it is the newest job listed that is not one of `known`. */
  async function newestJobId(apiKey: string, known: string[]): Promise<string> {
    return eventually(
      "the job in the list",
      async () => {
        const id = (await h.api.get("/v1/jobs?limit=1", { key: apiKey })).json.data[0]?.id as string | undefined;
        return id && !known.includes(id) ? id : undefined;
      },
      10_000,
    );
  }

  it("signs in with a key: a 204 and an HttpOnly, SameSite=Strict cookie for hours, Secure behind TLS; the session names the key's prefix and plan", async () => {
    const response = await h.api.post("/console/session", { api_key: a.apiKey });
    assert.equal(response.status, 204);
    const cookie = response.headers["set-cookie"]!;
    assert.match(cookie, /^pressroom_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=(\d+)$/);
    const maxAge = Number(/Max-Age=(\d+)/.exec(cookie)![1]);
    assert.ok(maxAge > 3_600 && maxAge <= 8 * 3_600, `Max-Age ${maxAge}: hours, not days`);
    assert.ok(!cookie.includes(a.apiKey), "the cookie is not the key");
    h.api.remember(sessionCookie(response).split("=")[1]!);

    const viaProxy = await h.api.post("/console/session", { api_key: a.apiKey }, { localAddress: "127.0.0.2", headers: { "x-forwarded-proto": "https" } });
    assert.match(viaProxy.headers["set-cookie"]!, /; Secure$/, "behind a TLS proxy the cookie is Secure");
    h.api.remember(sessionCookie(viaProxy).split("=")[1]!);
    const spoofed = await h.api.post("/console/session", { api_key: a.apiKey }, { headers: { "x-forwarded-proto": "https" } });
    assert.doesNotMatch(spoofed.headers["set-cookie"]!, /Secure/, "only a trusted proxy says the request came over TLS");
    h.api.remember(sessionCookie(spoofed).split("=")[1]!);

    const current = await sessionA.get("/console/session");
    assert.deepEqual(Object.keys(current.json).sort(), ["csrf_token", "key_prefix", "plan"]);
    assert.equal(current.json.plan, "pro");
    assert.ok(a.apiKey.startsWith(current.json.key_prefix) && current.json.key_prefix.length < a.apiKey.length);
  });

  it("refuses a wrong, malformed or revoked key with 401 and the error object, and a body that is not one with 422", async () => {
    const revoked = await h.admin.createKey("free");
    await h.admin.revoke(revoked.keyId);
    for (const apiKey of ["pr_live_000000000000000000000000000000", "not a key", revoked.apiKey]) {
      const response = await h.api.post("/console/session", { api_key: apiKey });
      assert.equal(response.status, 401, apiKey);
      assert.deepEqual(Object.keys(response.json).sort(), ERROR_FIELDS);
      assert.equal(response.json.code, "AUTH_INVALID");
      assert.equal(response.headers["set-cookie"], undefined);
    }
    const bad = await h.api.post("/console/session", { key: a.apiKey });
    assert.equal(bad.status, 422);
    assert.equal(bad.json.code, "PAYLOAD_INVALID");
    assert.equal((await h.api.get("/console/session")).status, 401);
  });

  it("with the cookie, the /v1 operations answer as with the key; a change needs the session's X-CSRF-Token and this origin, a bearer key never does", async () => {
    assert.equal((await sessionA.get("/v1/keys/usage")).json.plan, "pro");
    assert.ok(
      (await sessionA.get("/v1/templates")).json.templates.some((t: { id: string }) => t.id === TEMPLATE.id),
      "own templates with the cookie",
    );
    const secret = (await sessionA.get("/v1/keys/webhook-secret")).json.secret;

    const refusals = [
      await sessionA.post("/v1/keys/webhook-secret/rotate", undefined, { csrf: false }),
      await sessionA.request("POST", "/v1/keys/webhook-secret/rotate", { headers: { "x-csrf-token": sessionB.csrfToken } }),
      await sessionA.post("/v1/keys/webhook-secret/rotate", undefined, { origin: "http://127.0.0.1:1" }),
      await sessionA.request("POST", "/v1/keys/webhook-secret/rotate", { headers: { "sec-fetch-site": "same-site" } }),
      await sessionA.post("/v1/render", { html: "<p>x</p>", data: {} }, { csrf: false }),
      await sessionA.request("DELETE", `/v1/templates/${TEMPLATE.id}`, { csrf: false }),
    ];
    for (const refused of refusals) {
      assert.equal(refused.status, 403, refused.text);
      assert.deepEqual(Object.keys(refused.json).sort(), ERROR_FIELDS);
      assert.equal(refused.json.code, "CSRF_REJECTED");
    }
    assert.equal((await sessionA.get("/v1/keys/webhook-secret")).json.secret, secret, "nothing refused changed the secret");
    assert.equal((await h.api.get(`/v1/templates/${TEMPLATE.id}`, { key: a.apiKey })).status, 200, "nor deleted the template");

    const rotated = await sessionA.post("/v1/keys/webhook-secret/rotate", undefined);
    assert.equal(rotated.status, 200, rotated.text);
    assert.notEqual(rotated.json.secret, secret);
    assert.equal((await h.api.post("/v1/keys/webhook-secret/rotate", undefined, { key: a.apiKey })).status, 200, "a bearer key needs no token");
  });

  it("signs the demo key in read-only: it reads, and every change is refused", async () => {
    const demo = await ConsoleSession.signIn(h.api, DEMO_API_KEY);
    assert.equal((await demo.get("/console/session")).json.plan, "demo");
    assert.equal((await demo.get("/v1/jobs")).status, 200);
    const render = await demo.post("/v1/render", { html: "<p>x</p>", data: {} });
    assert.equal(render.status, 403);
    assert.equal(render.json.code, "DEMO_KEY_READ_ONLY");
    assert.equal((await demo.request("DELETE", "/console/session")).status, 204, "but it signs out");
  });

  it("signs out on the server: the cookie no longer works anywhere, and sign-out needs the token", async () => {
    const session = await ConsoleSession.signIn(h.api, a.apiKey);
    const refused = await session.request("DELETE", "/console/session", { csrf: false });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.code, "CSRF_REJECTED");
    assert.equal((await session.get("/v1/keys/usage")).status, 200);
    const out = await session.request("DELETE", "/console/session");
    assert.equal(out.status, 204);
    assert.match(out.headers["set-cookie"]!, /^pressroom_session=; .*Max-Age=0/);
    for (const path of ["/console/session", "/v1/keys/usage", "/v1/jobs", "/v1/keys/webhook-secret", "/v1/webhooks/deliveries"]) {
      const dead = await session.get(path);
      assert.equal(dead.status, 401, path);
      assert.equal(dead.json.code, "AUTH_INVALID", path);
    }
  });

  it("ends a revoked key's sessions within 10 s", async () => {
    const key = await h.admin.createKey("free");
    const session = await ConsoleSession.signIn(h.api, key.apiKey);
    assert.equal((await session.get("/v1/keys/usage")).status, 200);
    const revokedAt = Date.now();
    await h.admin.revoke(key.keyId);
    await eventually("the session refused", async () => ((await session.get("/v1/keys/usage")).status === 401 ? true : undefined), 10_000, 100);
    assert.ok(Date.now() - revokedAt < 10_000);
    assert.equal((await session.get("/console/session")).status, 401);
  });

  it("lists the key's jobs newest first, each as GET /v1/jobs/{id} answers it, filtered and paged with a cursor", async () => {
    const listed = await eventually(
      "every job listed",
      async () => {
        const data = (await sessionA.get("/v1/jobs?limit=100")).json.data as { id: string; status: string }[];
        return data.length === jobsA.length && data.every((job) => ["succeeded", "failed"].includes(job.status)) ? data : undefined;
      },
      30_000,
    );
    assert.deepEqual(
      listed.map((job) => job.id),
      [...jobsA].reverse(),
    );
    for (const job of listed) assert.deepEqual(job, (await sessionA.get(`/v1/jobs/${job.id}`)).json);

    const ids = async (query: string) => ((await sessionA.get(`/v1/jobs?${query}`)).json.data as { id: string }[]).map((job) => job.id);
    assert.deepEqual(await ids("status=failed"), [jobsA[3]]);
    assert.deepEqual(await ids("kind=image"), [jobsA[1]]);
    assert.deepEqual(await ids(`template_id=${TEMPLATE.id}`), [jobsA[2]]);
    const paged: string[] = [];
    for (let cursor = ""; ;) {
      const page = (await sessionA.get(`/v1/jobs?limit=2${cursor ? `&cursor=${cursor}` : ""}`)).json;
      paged.push(...page.data.map((job: { id: string }) => job.id));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    assert.deepEqual(paged, [...jobsA].reverse());
    for (const query of ["status=done", "kind=pdf", "limit=0", "limit=101", "cursor=bm90LWEtY3Vyc29y", "template_id=Not_An_Id"]) {
      const refused = await sessionA.get(`/v1/jobs?${query}`);
      assert.equal(refused.status, 422, query);
      assert.equal(refused.json.code, "PAYLOAD_INVALID", query);
    }
  });

  it("counts the key's jobs per day, at most 92 days at a time", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const days = (await sessionA.get(`/v1/keys/usage/daily?from=${today}&to=${today}`)).json.data;
    assert.deepEqual(days, [{ date: today, succeeded: 4, failed: 1, refunded: 0 }]);
    const period = (await sessionA.get("/v1/keys/usage/daily")).json.data as { date: string }[];
    assert.equal(period[0]!.date, `${today.slice(0, 8)}01`);
    assert.equal(period.at(-1)!.date, today);
    const wide = await sessionA.get("/v1/keys/usage/daily?from=2026-01-01&to=2026-04-03");
    assert.equal(wide.status, 422);
    assert.equal(wide.json.code, "PAYLOAD_INVALID");
    assert.equal((await sessionA.get("/v1/keys/usage/daily?from=2026-01-01&to=2026-04-02")).json.data.length, 92);
    assert.equal((await sessionA.get("/v1/keys/usage/daily?from=2026-02-30&to=2026-03-01")).status, 422);
  });

  it("lists each attempt of a callback, and replays one: the same event id, signed afresh", async () => {
    const jobId = jobsA[4]!;
    const deliveries = await eventually(
      "both attempts listed",
      async () => {
        const data = (await sessionA.get(`/v1/webhooks/deliveries?job_id=${jobId}`)).json.data;
        return data.length === 2 && data[0].status === "succeeded" ? data : undefined;
      },
      15_000,
    );
    const [second, first] = deliveries;
    assert.deepEqual(
      { attempt: first.attempt, status: first.status, response_status: first.response_status, job_id: first.job_id, event_type: first.event_type },
      { attempt: 1, status: "failed", response_status: 500, job_id: jobId, event_type: "job.succeeded" },
    );
    assert.ok(first.next_retry_at && first.duration_ms >= 0);
    assert.deepEqual(
      { attempt: second.attempt, status: second.status, response_status: second.response_status },
      { attempt: 2, status: "succeeded", response_status: 200 },
    );
    assert.equal(second.next_retry_at, null);
    assert.equal(first.event_id, second.event_id);
    assert.deepEqual((await sessionA.get("/v1/webhooks/deliveries?limit=1")).json.data, [second]);

    const replayed = await sessionA.post(`/v1/webhooks/deliveries/${first.id}/replay`, undefined);
    assert.equal(replayed.status, 202, replayed.text);
    assert.deepEqual(
      { attempt: replayed.json.attempt, status: replayed.json.status, event_id: replayed.json.event_id, response_status: replayed.json.response_status },
      { attempt: 3, status: "pending", event_id: first.event_id, response_status: null },
    );
    const calls = await receiver.waitFor("/hook-a", 3, 15_000);
    const [original, replay] = [calls[1]!, calls[2]!];
    assert.equal(JSON.parse(replay.rawBody).id, first.event_id);
    assert.equal(replay.rawBody, original.rawBody, "the same body");
    assert.notEqual(replay.headers["x-service-signature"], original.headers["x-service-signature"], "a fresh signature");
    await eventually(
      "the replay's outcome listed",
      async () => ((await sessionA.get(`/v1/webhooks/deliveries?job_id=${jobId}`)).json.data[0]?.status === "succeeded" ? true : undefined),
      15_000,
    );
  });

  it("the JavaScript client lists, counts and replays with the same operations", async () => {
    const client = new Pressroom({ apiKey: a.apiKey, baseUrl: h.stack.baseUrl });
    assert.deepEqual(
      (await client.jobs({ limit: 100 })).data.map((job) => job.id),
      [...jobsA].reverse(),
    );
    assert.deepEqual(
      (await client.jobs({ kind: "image" })).data.map((job) => job.id),
      [jobsA[1]],
    );
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual((await client.dailyUsage({ from: today, to: today })).data, [{ date: today, succeeded: 4, failed: 1, refunded: 0 }]);
    const [newest] = (await client.webhookDeliveries({ job_id: jobsA[4], limit: 1 })).data;
    const replayed = await client.replayWebhookDelivery(newest!.id);
    assert.deepEqual([replayed.attempt, replayed.status, replayed.event_id], [4, "pending", newest!.event_id]);
    await receiver.waitFor("/hook-a", 4, 15_000);
    await eventually(
      "its outcome listed",
      async () => ((await client.webhookDeliveries({ limit: 1 })).data[0]?.status === "succeeded" ? true : undefined),
      15_000,
    );
  });

  it("never shows or acts on another account's jobs, templates or deliveries: each route answers as for a missing id", async () => {
    const missingJob = "job_0000000000zzzzzzzzzzzzzzzz";
    const jobId = jobsA[0]!;
    const same = (
      theirs: { status: number; json: Record<string, string> },
      missing: { status: number; json: Record<string, string> },
      id: string,
      missingId: string,
    ) => {
      assert.equal(theirs.status, missing.status);
      assert.deepEqual({ ...theirs.json, error: theirs.json.error!.replace(id, missingId) }, missing.json);
    };
    same(await sessionB.get(`/v1/jobs/${jobId}`), await sessionB.get(`/v1/jobs/${missingJob}`), jobId, missingJob);
    same(await sessionB.get(`/v1/templates/${TEMPLATE.id}`), await sessionB.get("/v1/templates/no-such-template"), TEMPLATE.id, "no-such-template");
    same(
      await sessionB.get(`/v1/templates/${TEMPLATE.id}/versions`),
      await sessionB.get("/v1/templates/no-such-template/versions"),
      TEMPLATE.id,
      "no-such-template",
    );
    const theirDelivery = (await sessionA.get("/v1/webhooks/deliveries")).json.data[0].id as string;
    const missingDelivery = "dlv_00000000000000000000000000";
    same(
      await sessionB.post(`/v1/webhooks/deliveries/${theirDelivery}/replay`, undefined),
      await sessionB.post(`/v1/webhooks/deliveries/${missingDelivery}/replay`, undefined),
      theirDelivery,
      missingDelivery,
    );
    assert.deepEqual((await sessionB.get("/v1/jobs")).json, { data: [], next_cursor: null });
    assert.deepEqual((await sessionB.get(`/v1/jobs?template_id=${TEMPLATE.id}`)).json.data, []);
    assert.deepEqual((await sessionB.get("/v1/webhooks/deliveries")).json, { data: [], next_cursor: null });
    assert.deepEqual((await sessionB.get(`/v1/webhooks/deliveries?job_id=${jobsA[4]}`)).json.data, []);
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual((await sessionB.get(`/v1/keys/usage/daily?from=${today}&to=${today}`)).json.data, [{ date: today, succeeded: 0, failed: 0, refunded: 0 }]);
    assert.ok(!(await sessionB.get("/v1/templates")).json.templates.some((t: { id: string }) => t.id === TEMPLATE.id));
    const replaced = await sessionB.request("PUT", `/v1/templates/${TEMPLATE.id}`, { json: { ...TEMPLATE, html: "<p>mine</p>" } });
    assert.equal(replaced.status, 404);
    assert.equal((await h.api.get(`/v1/templates/${TEMPLATE.id}`, { key: a.apiKey })).json.version, 1, "their template unchanged");
  });

  it("finds every job and delivery again once the read models are lost, while running and with the webhook service restarted on empty tables", async () => {
    const snapshot = async () => ({
      jobs: (await sessionA.get("/v1/jobs?limit=100")).json.data.map((job: { id: string }) => job.id),
      deliveries: (await sessionA.get("/v1/webhooks/deliveries?limit=100")).json.data,
      days: (await sessionA.get("/v1/keys/usage/daily")).json.data,
    });
    const before = await snapshot();
    assert.equal(before.jobs.length, jobsA.length);
    assert.equal(before.deliveries.length, 4, "two attempts and two replays");
    const db = new pg.Client({ connectionString: h.stack.databaseUrl });
    await db.connect();
    const lose = () => db.query("truncate webhook.job_list, webhook.job_days, webhook.deliveries, webhook.read_model_position");
    try {
      await lose();
      assert.deepEqual((await sessionA.get("/v1/jobs")).json.data, [], "lost");
      assert.deepEqual(await eventually("rebuilt while running", async () => deepEqualOrUndefined(await snapshot(), before), 20_000, 200), before);

      await h.stack.services.kill("webhook");
      await lose();
      await h.stack.services.restart("webhook");
      assert.deepEqual(await eventually("rebuilt at start", async () => deepEqualOrUndefined(await snapshot(), before), 20_000, 200), before);
    } finally {
      await db.end();
    }
  });

  it("the read models answer the gateway's certificate only", async () => {
    const listJobs = async (peer: GrpcPeer) => {
      const clients = clientsAs(h.stack, peer);
      try {
        return await new Promise<number>((resolve) =>
          clients.webhook.listJobs({ keyId: a.keyId, status: "", kind: "", templateId: "", limit: 1, cursor: "" }, (err: ServiceError | null) =>
            resolve(err ? err.code : GrpcStatus.OK),
          ),
        );
      } finally {
        clients.close();
      }
    };
    assert.equal(await listJobs("gateway"), GrpcStatus.OK);
    for (const peer of ["identity", "metering", "render", "storage", "webhook", "admin"] as const) {
      assert.equal(await listJobs(peer), GrpcStatus.PERMISSION_DENIED, peer);
    }
  });

  endOfSuiteChecks(() => h);
});

function deepEqualOrUndefined<T>(actual: T, expected: T): T | undefined {
  try {
    assert.deepEqual(actual, expected);
    return actual;
  } catch {
    return undefined;
  }
}

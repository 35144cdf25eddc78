import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { constructEvent, verifyWebhookSignature } from "@pressroom/client";
import { jobEventsV1 } from "@pressroom/contracts";
import { readJobEvents } from "@pressroom/domain";
import { REPO_ROOT } from "@pressroom/stack";
import { connect, type NatsConnection } from "nats";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { BUCKET, presignedPut, s3Endpoint, tampered } from "./test-support/destinations";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver, eventually, type ReceivedCallback } from "./test-support/webhook-receiver";

const BODY_FIELDS = ["id", "type", "created_at", "job_id", "status", "url", "expires_at", "error"];

describe("webhook delivery: signed callbacks, retries, the job's record and the audit projection", () => {
  const receiver = new WebhookReceiver();
  let harness: Harness;
  let nc: NatsConnection;
  let apiKey: string;
  let secret: string;

  before(async () => {
    await receiver.start();
    harness = await startHarness({
      // A short retry window, so a destination that never accepts is given up within the test.
      serviceEnv: { webhook: receiver.env({ WEBHOOK_RETRY_BASE_MS: "200", WEBHOOK_RETRY_CAP_MS: "1000", WEBHOOK_RETRY_WINDOW_MS: "20000" }) },
    });
    nc = await connect({ servers: harness.stack.natsUrl });
    ({ apiKey } = await harness.admin.createKey("business"));
    const response = await harness.api.get("/v1/keys/webhook-secret", { key: apiKey });
    assert.equal(response.status, 200);
    secret = response.json.secret as string;
    assert.match(secret, /^whsec_/);
  });

  after(async () => {
    await nc?.close();
    await harness?.stop();
    await receiver.stop();
  });

  async function submit(webhookPath: string, body: Record<string, unknown> = { html: "<h1>Hello {{name}}</h1>", data: { name: "Ada" } }): Promise<string> {
    const response = await harness.api.post("/v1/render", { ...body, webhook_url: receiver.url(webhookPath) }, { key: apiKey });
    assert.equal(response.status, 202, response.text);
    assert.deepEqual(Object.keys(response.json).sort(), ["id", "status"]);
    assert.equal(response.json.status, "queued");
    assert.equal(response.headers.location, `/v1/jobs/${response.json.id}`);
    return response.json.id as string;
  }

  async function jobView(jobId: string, key = apiKey) {
    const response = await harness.api.get(`/v1/jobs/${jobId}`, { key });
    assert.equal(response.status, 200, response.text);
    return response.json;
  }

  function waitForWebhookState(jobId: string, state: string, timeoutMs = 30_000) {
    return eventually(
      `job ${jobId} webhook ${state}`,
      async () => {
        const view = await jobView(jobId);
        return view.webhook?.state === state ? view : undefined;
      },
      timeoutMs,
      200,
    );
  }

  function assertVerified(callback: ReceivedCallback): void {
    const header = callback.headers["x-service-signature"]!;
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.equal(verifyWebhookSignature(callback.rawBody, header, secret), true, "the client library's verifier accepts it");
    assert.equal(verifyWebhookSignature(`${callback.rawBody} `, header, secret), false, "and rejects another body");
    // Stripe's verifier: our header has its t=…,v1=… format and scheme.
    const stripe = new Stripe("sk_test_x").webhooks.signature;
    assert.ok(stripe);
    assert.equal(stripe.verifyHeader(callback.rawBody, header, secret), true);
    assert.throws(() => stripe.verifyHeader(callback.rawBody, header, `${secret}x`), /No signatures found matching/);
    // The Standard Webhooks verifier, with its webhook-id/-timestamp/-signature headers.
    const verified = new Webhook(secret).verify(callback.rawBody, callback.headers) as Record<string, unknown>;
    assert.equal(verified.id, callback.headers["webhook-id"]);
    assert.equal(callback.headers["webhook-timestamp"], header.slice(2, header.indexOf(",")));
  }

  it("delivers a signed callback for a succeeded job, and records the attempt in the job's history", async () => {
    const jobId = await submit("/hooks/ok?token=t0k3n");
    const [callback] = await receiver.waitFor("/hooks/ok", 1, 60_000);
    assert.ok(callback);
    assert.equal(callback.headers["content-type"], "application/json");
    assert.match(callback.headers["user-agent"] ?? "", /^Pressroom-Webhooks\//);
    assert.equal(callback.headers.host, "127.0.0.1");
    assert.equal(callback.path, "/hooks/ok?token=t0k3n");
    assertVerified(callback);

    const event = constructEvent(callback.rawBody, callback.headers["x-service-signature"], secret);
    assert.deepEqual(Object.keys(event), BODY_FIELDS);
    assert.equal(event.type, "job.succeeded");
    assert.equal(event.status, "succeeded");
    assert.equal(event.job_id, jobId);
    assert.equal(event.error, null);
    assert.match(event.id, /^evt_[0-9a-z]{26}$/);
    assert.equal(callback.headers["webhook-id"], event.id);
    const download = await harness.api.download(event.url!);
    assert.equal(download.status, 200);
    assert.equal(download.headers["content-type"], "application/pdf");
    assert.ok(Date.parse(event.expires_at!) > Date.now());

    const view = await waitForWebhookState(jobId, "delivered");
    assert.equal(view.status, "succeeded");
    assert.deepEqual(view.webhook, { state: "delivered", attempts: 1, last_status: 200, last_error: null, next_attempt_at: null });
    const types = view.events.map((e: { type: string }) => e.type);
    assert.deepEqual(types, ["job.accepted", "job.started", "job.succeeded", "job.webhook_attempted", "job.webhook_delivered"]);
    const succeeded = view.events.find((e: { type: string }) => e.type === "job.succeeded");
    assert.equal(event.id, succeeded.id, "the callback's id is the job's terminal event id");
    assert.equal(event.created_at, succeeded.time);
    assert.ok(view.events.slice(3).every((e: { source: string }) => e.source === "webhook"));
    const stored = await readJobEvents(await nc.jetstreamManager(), jobId);
    assert.equal(stored.find((e) => e.event.type === "job.succeeded")?.event.succeeded?.callback, true, "render's terminal event says a callback is wanted");
  });

  it("reports a failed job with url and expires_at null and the error's code and message", async () => {
    const jobId = await submit("/hooks/failed", { html: '<p>x</p><script>throw new Error("broken on purpose")</script>', data: {} });
    const [callback] = await receiver.waitFor("/hooks/failed", 1, 60_000);
    assertVerified(callback!);
    const event = JSON.parse(callback!.rawBody) as Record<string, unknown>;
    assert.deepEqual(Object.keys(event), BODY_FIELDS);
    assert.equal(event.type, "job.failed");
    assert.equal(event.status, "failed");
    assert.equal(event.job_id, jobId);
    assert.equal(event.url, null);
    assert.equal(event.expires_at, null);
    const error = event.error as { code: string; message: string };
    assert.deepEqual(Object.keys(error), ["code", "message"]);
    assert.equal(error.code, "RENDER_FAILED");
    assert.ok(error.message.length > 0);
    await waitForWebhookState(jobId, "delivered");
  });

  it("retries a receiver that is down for several attempts; the callback that finally arrives verifies with Stripe's and Standard Webhooks' verifiers", async () => {
    await receiver.down();
    let jobId: string;
    try {
      jobId = await submit("/hooks/recovers");
      await eventually(
        "three failed attempts",
        async () => {
          const view = await jobView(jobId);
          return view.webhook?.attempts >= 3 ? view : undefined;
        },
        60_000,
        100,
      );
    } finally {
      await receiver.up();
    }
    const [callback] = await receiver.waitFor("/hooks/recovers", 1, 30_000);
    assertVerified(callback!);
    const view = await waitForWebhookState(jobId, "delivered");
    const attempts = view.events.filter((e: { type: string }) => e.type === "job.webhook_attempted");
    assert.ok(attempts.length >= 4, `${attempts.length} attempts`);
    assert.equal(view.webhook.attempts, attempts.length);
    assert.equal(view.webhook.last_status, 200);
    assert.equal(JSON.parse(callback!.rawBody).id, view.events.find((e: { type: string }) => e.type === "job.succeeded").id);
    assert.equal(receiver.requestsOn("/hooks/recovers").length, 1, "the receiver saw only the successful attempt: it was down before");
  });

  it("keeps the event id across attempts, signs each afresh, and honours Retry-After", async () => {
    receiver.on("/hooks/busy", (n) => (n < 2 ? { status: 503, headers: { "retry-after": "2" } } : { status: 200 }));
    const jobId = await submit("/hooks/busy");
    const callbacks = await receiver.waitFor("/hooks/busy", 3, 60_000);
    const ids = callbacks.map((c) => JSON.parse(c.rawBody).id as string);
    assert.equal(new Set(ids).size, 1, "the same event id on every attempt");
    assert.equal(new Set(callbacks.map((c) => c.rawBody)).size, 1, "the same body on every attempt");
    assert.equal(new Set(callbacks.map((c) => c.headers["x-service-signature"])).size, 3, "a fresh signature at every attempt");
    for (const [i, c] of callbacks.entries()) {
      if (i > 0)
        assert.ok(c.at - callbacks[i - 1]!.at >= 1_900, `attempt ${i + 1} came ${c.at - callbacks[i - 1]!.at} ms after the previous one; Retry-After said 2 s`);
      assert.equal(verifyWebhookSignature(c.rawBody, c.headers["x-service-signature"], secret, { now: () => c.at }), true);
    }
    const view = await waitForWebhookState(jobId, "delivered");
    const attempted = view.events.filter((e: { type: string }) => e.type === "job.webhook_attempted");
    assert.equal(attempted.length, 3);
    assert.deepEqual(view.webhook, { state: "delivered", attempts: 3, last_status: 200, last_error: null, next_attempt_at: null });
  });

  it("stops at 410 Gone", async () => {
    receiver.on("/hooks/gone", () => ({ status: 410 }));
    const jobId = await submit("/hooks/gone");
    const view = await waitForWebhookState(jobId, "exhausted");
    assert.deepEqual(view.webhook, { state: "exhausted", attempts: 1, last_status: 410, last_error: "the receiver answered HTTP 410", next_attempt_at: null });
    assert.deepEqual(
      view.events.slice(-2).map((e: { type: string }) => e.type),
      ["job.webhook_attempted", "job.webhook_exhausted"],
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.equal(receiver.requestsOn("/hooks/gone").length, 1);
  });

  it("does not follow redirects: a 3xx is a failed attempt", async () => {
    receiver.on("/hooks/moved", (n) => (n === 0 ? { status: 302, headers: { location: receiver.url("/hooks/elsewhere") } } : { status: 200 }));
    const jobId = await submit("/hooks/moved");
    const view = await waitForWebhookState(jobId, "delivered");
    assert.equal(view.webhook.attempts, 2);
    assert.equal(receiver.requestsOn("/hooks/elsewhere").length, 0);
    assert.equal(receiver.requestsOn("/hooks/moved").length, 2);
  });

  it("projects every job event into webhook.audit_job_events, and a rebuild from the stream gives the identical rows", async () => {
    const jsm = await nc.jetstreamManager();
    const db = new pg.Client({ connectionString: harness.stack.databaseUrl });
    await db.connect();
    try {
      const select = async () =>
        (
          await db.query(
            `select event_id, stream_seq::text, job_id, key_id, type, occurred_at, source, summary
               from webhook.audit_job_events order by stream_seq`,
          )
        ).rows as Record<string, unknown>[];
      // Let the earlier tests' jobs settle, then wait for the projection to catch up with the stream.
      const expected = await eventually(
        "the projection catches up",
        async () => {
          const { state } = await jsm.streams.info("JOBS");
          const rows = await select();
          return rows.length === state.messages && state.messages > 0 ? { rows, state } : undefined;
        },
        30_000,
        200,
      );
      const before = expected.rows;

      const stored = new Map<number, jobEventsV1.JobEvent>();
      for (let seq = expected.state.first_seq; seq <= expected.state.last_seq; seq++) {
        const message = await jsm.streams.getMessage("JOBS", { seq });
        stored.set(seq, jobEventsV1.JobEvent.decode(message.data));
      }
      for (const row of before) {
        const event = stored.get(Number(row.stream_seq));
        assert.ok(event, `row at seq ${row.stream_seq} is in the stream`);
        assert.equal(row.event_id, event.id);
        assert.equal(row.job_id, event.jobId);
        assert.equal(row.key_id, event.keyId);
        assert.equal(row.type, event.type);
        assert.equal((row.occurred_at as Date).toISOString(), event.time);
        assert.equal(row.source, event.source);
      }
      const types = new Set(before.map((r) => r.type));
      for (const type of [
        "job.accepted",
        "job.started",
        "job.succeeded",
        "job.failed",
        "job.webhook_attempted",
        "job.webhook_delivered",
        "job.webhook_exhausted",
      ]) {
        assert.ok(types.has(type), `the projection has ${type} events`);
      }
      const text = JSON.stringify(before);
      assert.ok(!/sig=/.test(text) && !text.includes("t0k3n") && !text.includes("Hello"), "no signed URL, webhook token or document in the projection");
      const processed = await db.query(`select count(*)::int as n from webhook.processed_events where consumer = 'audit-projection'`);
      assert.equal(processed.rows[0].n, before.length);

      // Drop it by hand, then rebuild with the operator CLI: the same rows.
      await db.query("truncate webhook.audit_job_events");
      await runRebuild();
      assert.deepEqual(await select(), before);
      // The CLI drops and replays by itself too.
      await runRebuild();
      assert.deepEqual(await select(), before);
    } finally {
      await db.end();
    }
  });

  async function runRebuild(): Promise<void> {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, "services", "webhook", "dist", "audit-rebuild.js")], {
      env: { PATH: process.env.PATH, DATABASE_URL: harness.stack.databaseUrls.webhook, NATS_URL: harness.stack.natsUrl, LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    assert.equal(code, 0, output);
  }

  describe("destinations: the output PUT to a presigned URL before the job succeeds", () => {
    type View = Awaited<ReturnType<typeof jobView>>;
    const HEADER_SECRET = "hdr-v4lue-never-shown";
    const signatureOf = (url: string) => new URL(url).searchParams.get("X-Amz-Signature")!;
    /** Nothing a destination's url carries beyond its host, nor its header values, in the job, its events or the services' logs. */
    function assertNothingLeaks(url: string, view: View, stored: unknown[]): void {
      const secrets = [signatureOf(url), new URL(url).searchParams.get("X-Amz-Credential")!, HEADER_SECRET, new URL(url).pathname];
      const shown = JSON.stringify(view);
      const kept = JSON.stringify(stored);
      const logs = harness.stack.output();
      for (const secret of secrets) {
        assert.ok(!shown.includes(secret), `the job shows ${secret}`);
        assert.ok(!kept.includes(secret), `the JOBS stream keeps ${secret}`);
        assert.ok(!logs.includes(secret), `the services logged ${secret}`);
      }
      assert.ok(!logs.includes("X-Amz-Signature"), "no presigned query in the logs");
    }
    const storedEvents = async (jobId: string) =>
      (await readJobEvents(await nc.jetstreamManager(), jobId)).map(({ event }) => ({
        ...event,
        raw: Buffer.from(jobEventsV1.JobEvent.encode(event).finish()).toString("latin1"),
      }));
    const waitForStatus = (jobId: string, status: string, timeoutMs = 60_000, key = apiKey) =>
      eventually(
        `job ${jobId} ${status}`,
        async () => {
          const view = await jobView(jobId, key);
          return view.status === status ? view : undefined;
        },
        timeoutMs,
        200,
      );

    it("a sync render answers once a real S3 presigned PUT (SigV4 checked by the receiver) took the same bytes", async () => {
      const url = await presignedPut("invoices/2026-11/inv-1.pdf");
      const path = `/${BUCKET}/invoices/2026-11/inv-1.pdf`;
      receiver.on(path, s3Endpoint());
      const response = await harness.api.post(
        "/v1/render",
        { html: "<h1>Invoice {{n}}</h1>", data: { n: 1 }, destination: { url, headers: { "x-amz-meta-run": HEADER_SECRET } } },
        { key: apiKey },
      );
      assert.equal(response.status, 200, response.text);
      const [put] = receiver.requestsOn(path);
      assert.ok(put, "the destination got its PUT before the answer");
      assert.equal(put.method, "PUT");
      assert.equal(put.status, 200, "the receiver's SigV4 check held");
      assert.equal(put.headers["content-type"], "application/pdf");
      assert.equal(put.headers["x-amz-meta-run"], HEADER_SECRET);
      assert.equal(put.headers.host, "127.0.0.1");
      const download = await harness.api.download(response.json.url as string);
      assert.equal(download.status, 200);
      assert.ok(
        Buffer.compare(Buffer.from(download.body), put.body) === 0 && put.body.subarray(0, 5).toString() === "%PDF-",
        "the PUT carried the document's bytes",
      );

      const view = await jobView(response.json.id as string);
      assert.equal(view.status, "succeeded");
      assert.deepEqual(view.destination, { host: "127.0.0.1", state: "delivered", attempts: 1, last_status: 200, last_error: null, next_attempt_at: null });
      assert.deepEqual(
        view.events.map((e: { type: string }) => e.type),
        ["job.accepted", "job.started", "job.rendered", "job.destination_attempted", "job.destination_delivered", "job.succeeded"],
      );
      const attempt = view.events.find((e: { type: string }) => e.type === "job.destination_attempted");
      assert.equal(attempt.source, "webhook");
      assert.deepEqual(
        { ...attempt.destination, duration_ms: 0 },
        { attempt: 1, status: 200, duration_ms: 0, host: "127.0.0.1", error: null, next_attempt_at: null },
      );
      assert.ok(attempt.destination.duration_ms >= 0);
      assertNothingLeaks(url, view, await storedEvents(view.id));
    });

    it("retries a destination that fails twice, then accepts; an image's bytes arrive intact", async () => {
      const url = await presignedPut("cards/og.png");
      const path = `/${BUCKET}/cards/og.png`;
      receiver.on(
        path,
        s3Endpoint((n) => (n < 2 ? { status: 500 } : { status: 200 })),
      );
      const response = await harness.api.post(
        "/v1/image",
        { template_id: "og-image", data: { headline: "Month end", site_name: "Pressroom" }, async: true, destination: { url } },
        { key: apiKey },
      );
      assert.equal(response.status, 202, response.text);
      const view = await waitForStatus(response.json.id as string, "succeeded");
      const puts = receiver.requestsOn(path);
      assert.deepEqual(
        puts.map((p) => p.status),
        [500, 500, 200],
      );
      assert.equal(new Set(puts.map((p) => p.body.toString("base64"))).size, 1, "the same bytes at every attempt");
      const download = await harness.api.download(view.url as string);
      assert.equal(Buffer.compare(Buffer.from(download.body), puts[2]!.body), 0);
      const attempts = view.events.filter((e: { type: string }) => e.type === "job.destination_attempted").map((e: { destination: unknown }) => e.destination);
      assert.deepEqual(
        attempts.map((a: { attempt: number; status: number; error: string | null }) => [a.attempt, a.status, a.error]),
        [
          [1, 500, "the destination answered HTTP 500"],
          [2, 500, "the destination answered HTTP 500"],
          [3, 200, null],
        ],
      );
      assert.ok(attempts.slice(0, 2).every((a: { next_attempt_at: string | null }) => a.next_attempt_at !== null));
      assert.equal(view.destination.attempts, 3);
      assertNothingLeaks(url, view, await storedEvents(view.id));
    });

    it("a destination that never accepts fails the job DESTINATION_FAILED, charged, every attempt in its events; a 410 answers a sync request 502", async () => {
      const { apiKey: ownKey } = await harness.admin.createKey("pro");
      const url = tampered(await presignedPut("invoices/never.pdf"));
      const path = `/${BUCKET}/invoices/never.pdf`;
      receiver.on(path, s3Endpoint());
      const response = await harness.api.post("/v1/render", { html: "<p>never</p>", data: {}, async: true, destination: { url } }, { key: ownKey });
      assert.equal(response.status, 202, response.text);
      const view = await waitForStatus(response.json.id as string, "failed", 90_000, ownKey);
      assert.equal(view.error.code, "DESTINATION_FAILED");
      assert.match(view.error.message, /destination \(127\.0\.0\.1\) did not accept it: no success within the retry window/);
      assert.equal(view.url, null);
      assert.equal(view.destination.state, "exhausted");
      const attempts = view.events.filter((e: { type: string }) => e.type === "job.destination_attempted");
      assert.ok(attempts.length >= 2, `${attempts.length} attempts`);
      assert.ok(attempts.every((e: { destination: { status: number } }) => e.destination.status === 403));
      assert.equal(receiver.requestsOn(path).length, attempts.length, "each attempt reached the receiver once");
      assert.deepEqual(
        view.events.slice(-2).map((e: { type: string }) => e.type),
        ["job.destination_exhausted", "job.failed"],
      );
      const usage = await harness.api.get("/v1/keys/usage", { key: ownKey });
      assert.equal(usage.json.renders.used, 1, "the render happened: not refunded");
      assertNothingLeaks(url, view, await storedEvents(view.id));

      const goneUrl = await presignedPut("invoices/gone.pdf");
      receiver.on(
        `/${BUCKET}/invoices/gone.pdf`,
        s3Endpoint(() => ({ status: 410 })),
      );
      const sync = await harness.api.post("/v1/render", { html: "<p>gone</p>", data: {}, destination: { url: goneUrl } }, { key: ownKey });
      assert.equal(sync.status, 502, sync.text);
      assert.deepEqual(Object.keys(sync.json).sort(), ["code", "error", "hint"]);
      assert.equal(sync.json.code, "DESTINATION_FAILED");
      assert.match(sync.json.error, /410 Gone/);
      assert.ok(!sync.text.includes(signatureOf(goneUrl)));
    });

    it("takes a destination on a batch's items", async () => {
      const url = await presignedPut("batch/item-0.pdf");
      const path = `/${BUCKET}/batch/item-0.pdf`;
      receiver.on(path, s3Endpoint());
      const created = await harness.api.post("/v1/batches", { items: [{ html: "<p>item</p>", data: {}, destination: { url } }] }, { key: apiKey });
      assert.equal(created.status, 202, created.text);
      const items = await eventually(
        "the batch's item succeeded",
        async () => {
          const page = await harness.api.get(`/v1/batches/${created.json.id}/items`, { key: apiKey });
          return page.json.data?.[0]?.status === "succeeded" ? page.json.data : undefined;
        },
        60_000,
        200,
      );
      const [put] = receiver.requestsOn(path);
      assert.equal(put?.status, 200);
      const view = await jobView(items[0].job_id as string);
      assert.equal(view.destination.state, "delivered");
      assertNothingLeaks(url, view, await storedEvents(view.id));
    });
  });

  endOfSuiteChecks(() => harness);
});

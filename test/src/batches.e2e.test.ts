import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { verifyWebhookSignature } from "@pressroom/client";
import { waitFor } from "@pressroom/stack";
import { Webhook } from "standardwebhooks";
import { errorShape, type ApiResponse } from "./test-support/api";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver } from "./test-support/webhook-receiver";
import { fromBuffer, type Entry, type ZipFile } from "yauzl";

/**
 * Batches end to end (issue 42), through the real stack and Chromium: a batch is admitted all
 * or none against the quota and once against the rate limit, its items are ordinary jobs that
 * run within the key's concurrency limit (waiting, never refused), another key's job is not
 * held up behind them, and a cancellation refunds exactly what had not started. When every item
 * has ended, one batch.completed callback (signed as job callbacks, with their retries).
 */

const page = (i: number) => ({ html: "<h1>Item {{n}}</h1>", data: { n: i } });
/** A document that keeps its render busy for a while, so that a batch's items overlap if anything lets them. */
const slowPage = (i: number) => ({ html: "<h1>Item {{n}}</h1><script>const t = Date.now(); while (Date.now() - t < 700) {}</script>", data: { n: i } });

interface BatchBody {
  id: string;
  status: string;
  total: number;
  counts: { queued: number; running: number; succeeded: number; failed: number };
  created_at: string;
  archive: { url: string; expires_at: string; size_bytes: number } | null;
}

/** Every entry of a zip, by name. */
async function unzip(zip: Buffer): Promise<Map<string, Buffer>> {
  const file = await new Promise<ZipFile>((resolve, reject) => fromBuffer(zip, { lazyEntries: true }, (err, opened) => (err ? reject(err) : resolve(opened))));
  const entries = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    file.on("error", reject);
    file.on("end", resolve);
    file.on("entry", (entry: Entry) => {
      file.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("error", reject);
        stream.on("end", () => {
          entries.set(entry.fileName, Buffer.concat(chunks));
          file.readEntry();
        });
      });
    });
    file.readEntry();
  });
  return entries;
}

interface JobBody {
  id: string;
  status: string;
  started_at: string | null;
  finished_at: string | null;
  url: string | null;
  error: { code: string; message: string } | null;
}

describe("batches through the real stack", () => {
  let h: Harness;
  const receiver = new WebhookReceiver();

  before(async () => {
    await receiver.start();
    h = await startHarness({ serviceEnv: { webhook: receiver.env({ WEBHOOK_RETRY_BASE_MS: "200" }) } });
  });

  after(async () => {
    await h?.stop();
    await receiver.stop();
  });

  const usage = async (apiKey: string) =>
    (await h.api.get("/v1/keys/usage", { key: apiKey })).json as { renders: { used: number }; concurrency: { in_flight: number } };
  const batchOf = async (apiKey: string, id: string) => (await h.api.get(`/v1/batches/${id}`, { key: apiKey })).json as BatchBody;
  const jobOf = async (apiKey: string, id: string) => (await h.api.get(`/v1/jobs/${id}`, { key: apiKey })).json as JobBody;
  const ended = (batch: BatchBody) => batch.counts.queued + batch.counts.running === 0;

  /** Every item of a batch, paging through its items with `limit`. */
  async function allItems(apiKey: string, id: string, limit: number) {
    const items: { index: number; job_id: string; status: string; url?: string; error?: { code: string } }[] = [];
    let cursor: string | null = null;
    do {
      const response: ApiResponse = await h.api.get(`/v1/batches/${id}/items?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, { key: apiKey });
      assert.equal(response.status, 200, response.text);
      const body = response.json as { data: typeof items; next_cursor: string | null };
      items.push(...body.data);
      cursor = body.next_cursor;
    } while (cursor);
    return items;
  }

  it("refuses an invalid item, naming it, and runs nothing", async () => {
    const { apiKey } = await h.admin.createKey("pro");
    const cases: [unknown, RegExp][] = [
      [{ items: [page(0), { template_id: "Not A Template", data: {} }] }, /^items\[1\]\.template_id: /],
      [{ items: [page(0), page(1), { ...page(2), webhook_url: "https://example.com/hook" }] }, /^items\[2\]\.webhook_url: /],
      [{ items: [{ kind: "image", html: "<p>x</p>", data: {} }] }, /^items\[0\]/],
      [{ items: [page(0), { template_id: "no-such-template", data: {} }] }, /^items\[1\]\.template_id: /],
      [{ items: [] }, /^items: /],
      [{ items: Array.from({ length: 1001 }, (_, i) => page(i)) }, /^items: /],
    ];
    for (const [body, message] of cases) {
      const response = await h.api.post("/v1/batches", body, { key: apiKey });
      assert.equal(response.status, 422, response.text);
      assert.equal(errorShape(response).code, "PAYLOAD_INVALID");
      assert.match(errorShape(response).error, message);
    }
    assert.equal((await usage(apiKey)).renders.used, 0);
  });

  it("a batch over the month's quota is 429 QUOTA_EXCEEDED and nothing runs; it counts once against the rate limit", async () => {
    const { apiKey, keyId } = await h.admin.createKey("free");
    await h.admin.setUsed(keyId, "free", 98);
    const refused = await h.api.post("/v1/batches", { items: [page(0), page(1), page(2)] }, { key: apiKey });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(errorShape(refused).code, "QUOTA_EXCEEDED");
    assert.ok(Number(refused.headers["retry-after"]) >= 1);
    assert.equal((await usage(apiKey)).renders.used, 98, "no unit taken");

    const { apiKey: fresh } = await h.admin.createKey("starter");
    const accepted = await h.api.post("/v1/batches", { items: [page(0), page(1), page(2)] }, { key: fresh });
    assert.equal(accepted.status, 202, accepted.text);
    assert.equal(accepted.headers["ratelimit-remaining"], "59", "one request of the 60 a minute, whatever its items");
  });

  it("runs every item as an ordinary job within the key's concurrency, never refusing one, and completes", async () => {
    const { apiKey } = await h.admin.createKey("starter");
    const response = await h.api.post("/v1/batches", { items: Array.from({ length: 6 }, (_, i) => slowPage(i)) }, { key: apiKey });
    assert.equal(response.status, 202, response.text);
    const accepted = response.json as BatchBody;
    assert.match(accepted.id, /^bat_[0-9a-z]{26}$/);
    assert.equal(response.headers.location, `/v1/batches/${accepted.id}`);
    assert.deepEqual({ status: accepted.status, total: accepted.total }, { status: "accepted", total: 6 });
    assert.equal(accepted.counts.queued + accepted.counts.running, 6);

    await waitFor("the batch to complete", async () => ended(await batchOf(apiKey, accepted.id)), 120_000, 1_000);
    const batch = await batchOf(apiKey, accepted.id);
    assert.equal(batch.status, "completed");
    assert.deepEqual(batch.counts, { queued: 0, running: 0, succeeded: 6, failed: 0 });

    const items = await allItems(apiKey, accepted.id, 4);
    assert.deepEqual(
      items.map((item) => item.index),
      [0, 1, 2, 3, 4, 5],
    );
    const jobs = await Promise.all(items.map((item) => jobOf(apiKey, item.job_id)));
    for (const [i, job] of jobs.entries()) {
      assert.equal(job.status, "succeeded");
      assert.equal(items[i]!.url, job.url, "an item's url is its job's");
    }
    // At no moment did more than the plan's 2 items render.
    const edges = jobs.flatMap((job) => [
      { at: Date.parse(job.started_at!), delta: 1 },
      { at: Date.parse(job.finished_at!), delta: -1 },
    ]);
    edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
    let rendering = 0;
    let most = 0;
    for (const edge of edges) most = Math.max(most, (rendering += edge.delta));
    assert.ok(most <= 2, `${most} items rendered at once`);
    await waitFor("slots freed", async () => (await usage(apiKey)).concurrency.in_flight === 0, 10_000, 500);
    assert.equal((await usage(apiKey)).renders.used, 6, "one unit per item, each charged once");
  });

  it("another key's job is not held up behind a key's batch (fair share)", async () => {
    const { apiKey: big } = await h.admin.createKey("starter");
    const { apiKey: other } = await h.admin.createKey("pro");
    const response = await h.api.post("/v1/batches", { items: Array.from({ length: 10 }, (_, i) => slowPage(i)) }, { key: big });
    assert.equal(response.status, 202, response.text);
    const id = (response.json as BatchBody).id;
    await waitFor("the batch to start", async () => (await batchOf(big, id)).counts.running > 0, 30_000, 250);
    const single = await h.api.post("/v1/render", page(1), { key: other });
    assert.equal(single.status, 200, single.text);
    const during = await batchOf(big, id);
    assert.ok(during.counts.queued > 0, `the other key's job ended while the batch still had items waiting: ${JSON.stringify(during.counts)}`);
    await waitFor("the batch to complete", async () => ended(await batchOf(big, id)), 120_000, 1_000);
  });

  it("DELETE cancels what has not started, refunds exactly those units, and their jobs end CANCELLED", async () => {
    const { apiKey } = await h.admin.createKey("starter");
    const response = await h.api.post("/v1/batches", { items: Array.from({ length: 6 }, (_, i) => slowPage(i)) }, { key: apiKey });
    assert.equal(response.status, 202, response.text);
    const id = (response.json as BatchBody).id;
    const cancel = await h.api.request("DELETE", `/v1/batches/${id}`, { key: apiKey });
    assert.equal(cancel.status, 200, cancel.text);
    const cancelled = cancel.json as BatchBody;
    assert.equal(cancelled.status, "cancelled");
    const unstarted = cancelled.counts.failed;
    assert.ok(unstarted >= 4, `a starter key runs two items at a time: ${JSON.stringify(cancelled.counts)}`);
    assert.equal((await usage(apiKey)).renders.used, 6 - unstarted, "the cancelled items' units were refunded");

    await waitFor("the batch's running item to end", async () => ended(await batchOf(apiKey, id)), 60_000, 1_000);
    const items = await allItems(apiKey, id, 100);
    const failed = items.filter((item) => item.status === "failed");
    assert.equal(failed.length, unstarted);
    await waitFor(
      "the cancelled jobs to end",
      async () =>
        (await Promise.all(failed.map((item) => jobOf(apiKey, item.job_id)))).every((job) => job.status === "failed" && job.error?.code === "CANCELLED"),
      30_000,
      2_000,
    );
    assert.equal((await usage(apiKey)).renders.used, 6 - unstarted, "their failure events refunded nothing more");
    const again = await h.api.request("DELETE", `/v1/batches/${id}`, { key: apiKey });
    assert.equal((again.json as BatchBody).counts.failed, unstarted, "cancelling again changes nothing");
  });

  it("a batch's webhook_url is checked as a job's, and called back once when every item has ended, signed and retried as job callbacks", async () => {
    const { apiKey } = await h.admin.createKey("pro");
    const refused = await h.api.post("/v1/batches", { items: [page(0)], webhook_url: "http://example.com/hook" }, { key: apiKey });
    assert.equal(refused.status, 422, refused.text);
    assert.match(errorShape(refused).error, /^webhook_url: /);

    receiver.on("/hooks/batch", (n) => ({ status: n === 0 ? 503 : 200 }));
    const response = await h.api.post("/v1/batches", { items: [page(0), page(1), page(2)], webhook_url: receiver.url("/hooks/batch") }, { key: apiKey });
    assert.equal(response.status, 202, response.text);
    const accepted = response.json as BatchBody;
    assert.equal(accepted.archive, null);
    const [failed, delivered] = await receiver.waitFor("/hooks/batch", 2, 120_000);
    const batch = await batchOf(apiKey, accepted.id);
    assert.equal(batch.status, "completed");
    const body = JSON.parse(delivered!.rawBody) as { id: string; type: string; created_at: string; batch: BatchBody };
    assert.deepEqual(Object.keys(body), ["id", "type", "created_at", "batch"]);
    assert.equal(body.type, "batch.completed");
    assert.deepEqual(body.batch, batch, "the batch object, as GET answers it");
    assert.equal(failed!.rawBody, delivered!.rawBody, "every attempt sends the same bytes");
    assert.equal(delivered!.headers["webhook-id"], body.id);
    const { secret } = (await h.api.get("/v1/keys/webhook-secret", { key: apiKey })).json as { secret: string };
    assert.equal(verifyWebhookSignature(delivered!.rawBody, delivered!.headers["x-service-signature"]!, secret), true);
    assert.deepEqual(new Webhook(secret).verify(delivered!.rawBody, delivered!.headers), body, "the Standard Webhooks signature too");
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.equal(receiver.requestsOn("/hooks/batch").length, 2, "delivered once: no callback after the 2xx");
  });

  it("100 invoices with an archive, a render worker and a gateway killed during it: 100 outputs, one callback, a zip of the same bytes, each charged once", async (t) => {
    const started = Date.now();
    const { apiKey } = await h.admin.createKey("business");
    const templates = (await h.api.get("/v1/templates")).json as { templates: { id: string; sample_data: Record<string, unknown> }[] };
    const sample = templates.templates.find((t) => t.id === "invoice")!.sample_data;
    // The first ten share a filename (made unique in the zip), the rest are named by their index.
    const items = Array.from({ length: 100 }, (_, i) => ({
      template_id: "invoice",
      data: sample,
      ...(i < 10 ? { options: { filename: "invoice.pdf" } } : {}),
    }));
    const expectedName = (i: number) => (i === 0 ? "invoice.pdf" : i < 10 ? `invoice (${i + 1}).pdf` : `${i}.pdf`);
    receiver.on("/hooks/month-end", () => ({ status: 200 }));
    const response = await h.api.post("/v1/batches", { items, webhook_url: receiver.url("/hooks/month-end"), archive: true }, { key: apiKey });
    assert.equal(response.status, 202, response.text);
    const id = (response.json as BatchBody).id;

    const { services } = h.stack;
    await waitFor("the batch to be under way", async () => (await batchOf(apiKey, id)).counts.succeeded >= 5, 120_000, 250);
    await services.kill("render");
    await services.restart("render");
    await services.kill("gateway");
    await services.restart("gateway");

    await waitFor("the batch to complete with its archive", async () => (await batchOf(apiKey, id)).archive !== null, 300_000, 1_000);
    const batch = await batchOf(apiKey, id);
    assert.equal(batch.status, "completed");
    assert.deepEqual(batch.counts, { queued: 0, running: 0, succeeded: 100, failed: 0 }, "nothing lost");
    const [callback] = await receiver.waitFor("/hooks/month-end", 1, 30_000);
    assert.deepEqual((JSON.parse(callback!.rawBody) as { batch: BatchBody }).batch, batch, "called back after the archive was ready, with it");

    const zip = await h.api.download(batch.archive!.url);
    assert.equal(zip.status, 200, zip.text);
    assert.equal(zip.headers["content-type"], "application/zip");
    assert.equal(zip.body.length, batch.archive!.size_bytes);
    const entries = await unzip(zip.body);
    const listed = await allItems(apiKey, id, 100);
    assert.equal(entries.size, 100);
    for (const item of listed) {
      const download = await h.api.download(item.url!);
      assert.equal(download.status, 200);
      assert.ok(entries.get(expectedName(item.index))?.equals(download.body), `the zip's ${expectedName(item.index)} is item ${item.index}'s download`);
    }
    await waitFor("slots freed", async () => (await usage(apiKey)).concurrency.in_flight === 0, 30_000, 500);
    assert.equal((await usage(apiKey)).renders.used, 100, "each item charged once");
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.equal(receiver.requestsOn("/hooks/month-end").length, 1, "one callback");
    t.diagnostic(`100-item batch with kills: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  it("Idempotency-Key: the same batch again replays it, charged once; another key sees no such batch", async () => {
    const { apiKey } = await h.admin.createKey("pro");
    const body = { items: [page(0), page(1)] };
    const headers = { "idempotency-key": "month-end-2026-11" };
    const first = await h.api.post("/v1/batches", body, { key: apiKey, headers });
    assert.equal(first.status, 202, first.text);
    const replay = await h.api.post("/v1/batches", body, { key: apiKey, headers });
    assert.equal(replay.status, 202, replay.text);
    assert.equal(replay.headers["idempotent-replayed"], "true");
    assert.equal((replay.json as BatchBody).id, (first.json as BatchBody).id);
    const reused = await h.api.post("/v1/batches", { items: [page(3)] }, { key: apiKey, headers });
    assert.equal(errorShape(reused).code, "IDEMPOTENCY_KEY_REUSED");
    assert.equal((await usage(apiKey)).renders.used, 2);

    const { apiKey: stranger } = await h.admin.createKey("pro");
    const id = (first.json as BatchBody).id;
    for (const path of [`/v1/batches/${id}`, `/v1/batches/${id}/items`]) assert.equal((await h.api.get(path, { key: stranger })).status, 404);
    assert.equal((await h.api.request("DELETE", `/v1/batches/${id}`, { key: stranger })).status, 404);
  });

  endOfSuiteChecks(() => h);
});

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { createDb, migrateToLatest } from "@pressroom/platform";
import { jobEvent, type StoredJobEvent } from "@pressroom/domain";
import { isolatedDatabase } from "@pressroom/stack";
import type { Kysely } from "kysely";
import type { WebhookDb } from "../db";
import { migrations } from "../migrations";
import { applyEvent, deliveryId } from "./projection.repository";
import { dailyUsage, listDeliveries, listJobs } from "./queries";

/**
 * What each job event does to the read models, against a real PostgreSQL: they agree with the
 * fold of the events (foldJob), and the deliveries have the same ids whenever they are rebuilt.
 */
describe("the read models' projection", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<WebhookDb>;
  let seq = 0;

  before(async () => {
    database = await isolatedDatabase("pressroom_webhook_test");
    db = createDb<WebhookDb>({ url: database.url, schema: "webhook", max: 4 });
    await migrateToLatest(db, "webhook", migrations);
  });

  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  const ids = (n: number) => ({ jobId: `job_${String(n).padStart(26, "0")}`, keyId: "key_projection" });
  const apply = async (event: jobEventsV1.JobEvent, writer = event.source): Promise<StoredJobEvent> => {
    const stored = { seq: ++seq, event, writer };
    await applyEvent(db, stored);
    return stored;
  };
  const accepted = (n: number, webhookUrl = "") =>
    jobEvent("job.accepted", { ...ids(n), source: "gateway", accepted: { kind: jobEventsV1.JobKind.JOB_KIND_RENDER, templateId: "note", webhookUrl } });
  const succeeded = (n: number) => jobEvent("job.succeeded", { ...ids(n), source: "render", succeeded: { outputId: "out_1", sizeBytes: "10" } });
  const failed = (n: number, refund: boolean) => jobEvent("job.failed", { ...ids(n), source: "render", failed: { code: "INTERNAL_ERROR", refund } });
  const attempted = (n: number, attempt: number, status: number, more: Partial<jobEventsV1.WebhookAttempted> = {}) =>
    jobEvent("job.webhook_attempted", { ...ids(n), source: "webhook", webhookAttempted: { attempt, status, durationMs: 12, ...more } });
  const status = async (n: number) => (await db.selectFrom("job_list").select("status").where("job_id", "=", ids(n).jobId).executeTakeFirst())?.status;
  const deliveries = async (n: number) =>
    (await listDeliveries(db, { keyId: "key_projection", jobId: ids(n).jobId, limit: 100, cursor: "" })).deliveries.map((d) => ({
      attempt: d.attempt,
      status: d.status,
      responseStatus: d.responseStatus,
      nextRetryAt: d.nextRetryAt,
    }));

  it("lists a job from its acceptance, ignores what the fold ignores, and counts its outcome once on its day", async () => {
    await apply(jobEvent("job.started", { ...ids(1), source: "render", started: { attempt: 1 } }));
    assert.equal(await status(1), undefined, "nothing before the acceptance");
    await apply(accepted(1));
    await apply(accepted(1), "render");
    assert.equal(await status(1), "queued");
    await apply(jobEvent("job.started", { ...ids(1), source: "render", started: { attempt: 1 } }));
    assert.equal(await status(1), "rendering");
    await apply(succeeded(1), "gateway");
    assert.equal(await status(1), "rendering", "an outcome written by another writer than render is no outcome");
    await apply(failed(1, true));
    await apply(succeeded(1));
    assert.equal(await status(1), "failed", "the first outcome stays");
    await apply(accepted(2));
    await apply(failed(2, false));
    await apply(accepted(3));
    await apply(succeeded(3));
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual((await dailyUsage(db, { keyId: "key_projection", from: today, to: today })).days, [{ date: today, succeeded: 1, failed: 2, refunded: 1 }]);
    assert.deepEqual((await listJobs(db, { keyId: "key_projection", status: "failed", kind: "", templateId: "", limit: 10, cursor: "" })).jobIds, [
      ids(2).jobId,
      ids(1).jobId,
    ]);
  });

  it("makes one delivery per attempt of a callback, the first pending from the job's end, and replays numbered after them", async () => {
    await apply(accepted(4, "https://hooks.example.com/in?token=t"));
    const end = await apply(succeeded(4));
    assert.deepEqual(await deliveries(4), [{ attempt: 1, status: "pending", responseStatus: 0, nextRetryAt: "" }]);
    await apply(attempted(4, 1, 503, { nextAttemptAt: "2030-01-01T00:00:05.000Z" }));
    await apply(attempted(4, 2, 200));
    await apply(jobEvent("job.webhook_delivered", { ...ids(4), source: "webhook", webhookDelivered: { attempt: 2, status: 200 } }));
    await apply(jobEvent("job.webhook_replay_requested", { ...ids(4), source: "webhook", webhookReplayRequested: { attempt: 3, replayOf: "dlv_x" } }));
    assert.deepEqual(await deliveries(4), [
      { attempt: 3, status: "pending", responseStatus: 0, nextRetryAt: "" },
      { attempt: 2, status: "succeeded", responseStatus: 200, nextRetryAt: "" },
      { attempt: 1, status: "failed", responseStatus: 503, nextRetryAt: "2030-01-01T00:00:05.000Z" },
    ]);
    await apply(attempted(4, 3, 0, { replay: true, error: "connection refused" }));
    const listed = (await listDeliveries(db, { keyId: "key_projection", jobId: ids(4).jobId, limit: 100, cursor: "" })).deliveries;
    assert.deepEqual(
      listed.map((d) => d.id),
      [3, 2, 1].map((attempt) => deliveryId(end.event.id, attempt)),
      "ids from the callback's event id and the attempt: the same after a rebuild",
    );
    assert.equal(listed[0]!.status, "failed");
    assert.ok(listed.every((d) => d.eventId === end.event.id && d.eventType === "job.succeeded"));
  });

  it("fails the pending first attempt of a callback given up before it was made, and makes no delivery for a job without a webhook_url", async () => {
    await apply(accepted(5, "https://hooks.example.com/in"));
    await apply(failed(5, false));
    await apply(jobEvent("job.webhook_exhausted", { ...ids(5), source: "webhook", webhookExhausted: { attempts: 0, reason: "the API key no longer exists" } }));
    assert.deepEqual(await deliveries(5), [{ attempt: 1, status: "failed", responseStatus: 0, nextRetryAt: "" }]);
    assert.deepEqual(await deliveries(3), []);
  });

  it("pages with an opaque cursor and refuses one it did not answer", async () => {
    const first = await listJobs(db, { keyId: "key_projection", status: "", kind: "", templateId: "", limit: 2, cursor: "" });
    const second = await listJobs(db, { keyId: "key_projection", status: "", kind: "", templateId: "", limit: 2, cursor: first.nextCursor });
    assert.deepEqual(
      [...first.jobIds, ...second.jobIds],
      [5, 4, 3, 2].map((n) => ids(n).jobId),
    );
    await assert.rejects(listJobs(db, { keyId: "key_projection", status: "", kind: "", templateId: "", limit: 2, cursor: "c2VjcmV0" }), /cursor/);
    assert.deepEqual((await listJobs(db, { keyId: "key_other", status: "", kind: "", templateId: "", limit: 2, cursor: "" })).jobIds, []);
  });
});

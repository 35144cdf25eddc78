import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { createDb, createLogger, migrateToLatest, newId, streams, subjects } from "@pressroom/platform";
import { PLANS, jobEvent } from "@pressroom/domain";
import { isolatedDatabase, provisionNats, startPrivateNats, type PrivateNats } from "@pressroom/stack";
import { sql, type Kysely } from "kysely";
import { connect, type JetStreamManager, type NatsConnection } from "nats";
import type { MeteringDb } from "../db";
import { migrations } from "../migrations";
import { admitRequest, readUsage, releaseForEvent, sweep } from "../admission/admission.repository";
import { cancelBatch, createBatch, endBatchItem, listBatchItems, readBatch } from "./batches.repository";
import { BatchEnds } from "./batch-ends";
import { BatchDispatcher, publishCommand } from "./dispatcher";

/**
 * Batches in metering (issue 42): admitted all or none against the month's quota, their items
 * dispatched to the RENDER queue only as the key's concurrency slots free up, cancelled with
 * exactly the unstarted refunded. Real PostgreSQL and a real NATS JetStream with Pressroom's
 * topology (the commands land in its RENDER stream).
 */
describe("batches in PostgreSQL and the RENDER queue", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<MeteringDb>;
  let dir: string;
  let nats: PrivateNats;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let dispatcher: BatchDispatcher;
  const key = () => `key_${randomBytes(8).toString("hex")}`;

  before(async () => {
    database = await isolatedDatabase("pressroom_metering_batches");
    db = createDb<MeteringDb>({ url: database.url, schema: "metering", max: 10 });
    await migrateToLatest(db, "metering", migrations);
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-batches-"));
    nats = await startPrivateNats(path.join(dir, "nats"));
    await provisionNats(nats.url);
    nc = await connect({ servers: nats.url });
    jsm = await nc.jetstreamManager();
    dispatcher = new BatchDispatcher({ db, js: nc.jetstream(), logger: createLogger("metering-test", "silent"), leaseSeconds: 900, intervalMs: 60_000 });
  });

  after(async () => {
    await db?.destroy();
    await database?.drop();
    await nc?.close();
    await nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A batch's items as the gateway sends them: each a job id and its render command. */
  function items(keyId: string, n: number) {
    return Array.from({ length: n }, () => {
      const jobId = newId("job");
      const accepted = jobEvent("job.accepted", {
        jobId,
        keyId,
        source: "gateway",
        accepted: jobEventsV1.JobAccepted.fromPartial({ html: "<p>x</p>", dataJson: "{}" }),
      });
      const command = jobEventsV1.RenderCommand.encode({ jobId, keyId, accepted, outcomeInbox: "", cancelled: false }).finish();
      return { jobId, command, filename: "" };
    });
  }

  const create = (
    keyId: string,
    plan: string,
    n: number,
    idempotency?: { key: string; requestDigest: string },
    end: { webhookUrl?: string; archive: boolean } = { archive: false },
  ) => createBatch(db, { keyId, plan, batchId: newId("bat"), items: items(keyId, n), idempotency, ...end });

  /** The BATCHES stream's events of one batch, in order. */
  async function batchEvents(batchId: string): Promise<{ subject: string; body: Record<string, unknown> }[]> {
    const found: { subject: string; body: Record<string, unknown> }[] = [];
    const info = await jsm.streams.info(streams.BATCHES);
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const msg = await jsm.streams.getMessage(streams.BATCHES, { seq }).catch(() => undefined);
      if (!msg) continue;
      const body = msg.json<Record<string, unknown>>();
      const id = (body.batch_id ?? (body.batch as { id: string }).id) as string;
      if (id === batchId) found.push({ subject: msg.subject, body });
    }
    return found;
  }

  /** The render commands in the RENDER stream for these jobs. */
  async function commandsFor(jobIds: string[]): Promise<jobEventsV1.RenderCommand[]> {
    const found: jobEventsV1.RenderCommand[] = [];
    const info = await jsm.streams.info(streams.RENDER);
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const msg = await jsm.streams.getMessage(streams.RENDER, { seq }).catch(() => undefined);
      if (!msg) continue;
      const command = jobEventsV1.RenderCommand.decode(msg.data);
      if (jobIds.includes(command.jobId)) found.push(command);
    }
    return found;
  }

  it("admits a batch all or none: one unit per item, and a batch over the quota writes nothing", async () => {
    const k = key();
    const period = (await readUsage(db, k, "free")).periodStart.toISOString().slice(0, 10);
    await sql`insert into usage_periods (key_id, period_start, renders_used) values (${k}, ${period}::date, ${PLANS.free.rendersPerMonth - 3})`.execute(db);
    const refused = await create(k, "free", 4);
    assert.equal(refused.decision, "quota_exceeded");
    assert.ok(refused.decision === "quota_exceeded" && refused.retryAfterSeconds >= 1);
    assert.equal((await readUsage(db, k, "free")).rendersUsed, PLANS.free.rendersPerMonth - 3, "nothing taken");
    assert.equal((await db.selectFrom("charges").select("job_id").where("key_id", "=", k).execute()).length, 0);
    assert.equal((await db.selectFrom("batches").select("batch_id").where("key_id", "=", k).execute()).length, 0);

    const admitted = await create(k, "free", 3);
    assert.equal(admitted.decision, "allowed");
    assert.equal((await readUsage(db, k, "free")).rendersUsed, PLANS.free.rendersPerMonth);
    assert.ok(admitted.decision === "allowed");
    assert.deepEqual(
      { ...admitted.batch, createdAt: undefined, id: undefined },
      {
        id: undefined,
        status: "accepted",
        total: 3,
        counts: { queued: 3, running: 0, succeeded: 0, failed: 0 },
        createdAt: undefined,
        archive: null,
      },
    );
  });

  it("is exact under parallel batches at the quota's edge: units are never admitted twice", async () => {
    const k = key();
    const period = (await readUsage(db, k, "free")).periodStart.toISOString().slice(0, 10);
    await sql`insert into usage_periods (key_id, period_start, renders_used) values (${k}, ${period}::date, ${PLANS.free.rendersPerMonth - 10})`.execute(db);
    const results = await Promise.all(Array.from({ length: 6 }, () => create(k, "free", 4)));
    assert.equal(results.filter((r) => r.decision === "allowed").length, 2);
    assert.equal((await readUsage(db, k, "free")).rendersUsed, PLANS.free.rendersPerMonth - 2);
  });

  it("dispatches items only into free slots of the key, oldest first, and the next when one ends", async () => {
    const k = key();
    const created = await create(k, "starter", 5);
    assert.ok(created.decision === "allowed");
    const batchId = created.batch.id;
    assert.equal(await dispatcher.dispatch(k), PLANS.starter.concurrentRenders);
    assert.equal(await dispatcher.dispatch(k), 0, "no free slot: the rest wait");
    const page = await listBatchItems(db, { keyId: k, batchId, afterIndex: -1, limit: 10 });
    assert.deepEqual(
      page.items.map((item) => item.status),
      ["running", "running", "queued", "queued", "queued"],
    );
    assert.equal((await readUsage(db, k, "starter")).inFlight, 2, "each running item holds a slot");
    const commands = await commandsFor(page.items.map((item) => item.jobId));
    assert.deepEqual(
      commands.map((c) => c.jobId).sort(),
      page.items
        .slice(0, 2)
        .map((item) => item.jobId)
        .sort(),
    );
    assert.ok(commands.every((c) => !c.cancelled && c.accepted?.accepted?.html === "<p>x</p>"));
    assert.equal((await admitRequest(db, { keyId: k, plan: "starter", renderJobId: newId("job"), leaseSeconds: 900 })).decision, "concurrency_exceeded");

    const first = page.items[0]!.jobId;
    await releaseForEvent(db, { eventId: newId("evt"), jobId: first, refund: false });
    assert.equal(await endBatchItem(db, first, "succeeded"), k);
    assert.equal(await dispatcher.dispatch(k), 1);
    const batch = await readBatch(db, k, batchId);
    assert.equal(batch?.status, "running");
    assert.deepEqual(batch?.counts, { queued: 2, running: 2, succeeded: 1, failed: 0 });
    assert.equal((await listBatchItems(db, { keyId: k, batchId, afterIndex: 1, limit: 2 })).more, true);
    assert.equal(await readBatch(db, key(), batchId), undefined, "another key sees no such batch");
  });

  it("dispatches a key's older batch whole before its newer one", async () => {
    const k = key();
    const older = await create(k, "starter", 3);
    const newer = await create(k, "starter", 2);
    assert.ok(older.decision === "allowed" && newer.decision === "allowed");
    const statuses = async () =>
      Promise.all(
        [older.batch.id, newer.batch.id].map(async (batchId) =>
          (await listBatchItems(db, { keyId: k, batchId, afterIndex: -1, limit: 10 })).items.map((item) => item.status),
        ),
      );
    assert.equal(await dispatcher.dispatch(k), 2);
    assert.deepEqual(await statuses(), [
      ["running", "running", "queued"],
      ["queued", "queued"],
    ]);
    for (const batchId of [older.batch.id, older.batch.id]) {
      const [running] = (await listBatchItems(db, { keyId: k, batchId, afterIndex: -1, limit: 10 })).items.filter((item) => item.status === "running");
      await releaseForEvent(db, { eventId: newId("evt"), jobId: running!.jobId, refund: false });
      await endBatchItem(db, running!.jobId, "succeeded");
    }
    assert.equal(await dispatcher.dispatch(k), 2);
    assert.deepEqual(await statuses(), [
      ["succeeded", "succeeded", "running"],
      ["running", "queued"],
    ]);
  });

  it("cancels exactly the unstarted items, refunding their units once; running ones finish", async () => {
    const k = key();
    const created = await create(k, "free", 4);
    assert.ok(created.decision === "allowed");
    const batchId = created.batch.id;
    await dispatcher.dispatch(k);
    const ended: string[] = [];
    const cancelled = await cancelBatch(db, k, batchId, async (jobs) => {
      for (const job of jobs) {
        ended.push(job.jobId);
        await publishCommand(nc.jetstream(), job.jobId, job.command, true);
      }
    });
    assert.equal(cancelled, 3);
    const kept = await db.selectFrom("batch_items").select("command").where("batch_id", "=", batchId).where("command", "is not", null).execute();
    assert.equal(kept.length, 0, "no item's command (its html and data) is kept once dispatched or cancelled");
    const usage = await readUsage(db, k, "free");
    assert.equal(usage.rendersUsed, 1, "the running item stays charged, the three unstarted were refunded");
    const commands = await commandsFor(ended);
    assert.equal(commands.length, 3);
    assert.ok(commands.every((c) => c.cancelled));
    const batch = await readBatch(db, k, batchId);
    assert.equal(batch?.status, "cancelled");
    assert.deepEqual(batch?.counts, { queued: 0, running: 1, succeeded: 0, failed: 3 });

    // The cancelled jobs' failure events (refund) refund nothing more; cancelling again cancels nothing.
    for (const jobId of ended) await releaseForEvent(db, { eventId: newId("evt"), jobId, refund: true });
    assert.equal((await readUsage(db, k, "free")).rendersUsed, 1);
    assert.equal(await cancelBatch(db, k, batchId, async () => undefined), 0);
    assert.equal(await dispatcher.dispatch(k), 0, "nothing left to dispatch");
    assert.equal(await cancelBatch(db, key(), batchId, async () => undefined), undefined, "another key's batch is not found");

    // The sweep keeps a batch as long as its charges, and never one with an item still running.
    await sql`update batches set created_at = now() - interval '93 days' where batch_id = ${batchId}`.execute(db);
    await sweep(db);
    assert.ok(await readBatch(db, k, batchId), "an item still runs");
    await endBatchItem(db, (await listBatchItems(db, { keyId: k, batchId, afterIndex: -1, limit: 1 })).items[0]!.jobId, "succeeded");
    await sweep(db);
    assert.equal(await readBatch(db, k, batchId), undefined);
    assert.equal((await db.selectFrom("batch_items").select("job_id").where("batch_id", "=", batchId).execute()).length, 0);
  });

  it("a batch's end is seen once: its archive asked for with the succeeded items, then announced once, with the archive", async () => {
    const logger = createLogger("metering-test", "silent");
    // Two replicas: each sees the last item's end (a redelivery), only one marks the batch ended.
    const [one, two] = [new BatchEnds({ db, js: nc.jetstream(), logger }), new BatchEnds({ db, js: nc.jetstream(), logger })];
    const k = key();
    const created = await create(k, "pro", 3, undefined, { webhookUrl: "https://example.com/hook", archive: true });
    assert.ok(created.decision === "allowed");
    const batchId = created.batch.id;
    await db.updateTable("batch_items").set({ filename: "a.pdf" }).where("batch_id", "=", batchId).where("idx", "=", 2).execute();
    await dispatcher.dispatch(k);
    const jobs = (await listBatchItems(db, { keyId: k, batchId, afterIndex: -1, limit: 10 })).items.map((item) => item.jobId);
    await endBatchItem(db, jobs[0]!, "succeeded");
    await endBatchItem(db, jobs[1]!, "failed");
    await Promise.all([one.afterItem(jobs[1]!), two.afterItem(jobs[1]!)]);
    assert.deepEqual(await batchEvents(batchId), [], "an item still runs");
    await endBatchItem(db, jobs[2]!, "succeeded");
    await Promise.all([one.afterItem(jobs[2]!), two.afterItem(jobs[2]!), one.check(batchId)]);
    const asked = await batchEvents(batchId);
    assert.deepEqual(asked, [
      {
        subject: subjects.batchEnded,
        body: {
          v: 1,
          batch_id: batchId,
          key_id: k,
          items: [
            { index: 0, job_id: jobs[0], filename: "" },
            { index: 2, job_id: jobs[2], filename: "a.pdf" },
          ],
        },
      },
    ]);
    assert.equal((await readBatch(db, k, batchId))?.archive, null, "no archive until storage made it");

    const archive = { url: "https://example.com/v1/outputs/out_x?exp=1&sig=2", expires_at: "2026-11-29T06:00:00.000Z", size_bytes: 1234 };
    // Storage's answer, twice (a redelivery): recorded once, the end announced once.
    await one.archived({ v: 1, batch_id: batchId, key_id: k, archive });
    await two.archived({ v: 1, batch_id: batchId, key_id: k, archive: { ...archive, size_bytes: 1 } });
    const events = await batchEvents(batchId);
    assert.equal(events.length, 2);
    assert.equal(events[1]!.subject, subjects.batchCompleted);
    const completed = events[1]!.body as { id: string; webhook_url: string; batch: Record<string, unknown> };
    assert.equal(completed.id, `evt_${batchId.slice(4)}`);
    assert.equal(completed.webhook_url, "https://example.com/hook");
    assert.deepEqual(
      { ...completed.batch, created_at: undefined },
      {
        id: batchId,
        status: "completed",
        total: 3,
        counts: { queued: 0, running: 0, succeeded: 2, failed: 1 },
        created_at: undefined,
        archive,
      },
    );
    const view = await readBatch(db, k, batchId);
    assert.equal(view?.archive?.sizeBytes, 1234, "the first answer was kept");
  });

  it("a cancelled batch with nothing running ends at once; without an archive its end is announced at once", async () => {
    const ends = new BatchEnds({ db, js: nc.jetstream(), logger: createLogger("metering-test", "silent") });
    const k = key();
    const created = await create(k, "pro", 2, undefined, { webhookUrl: "https://example.com/hook", archive: false });
    assert.ok(created.decision === "allowed");
    const batchId = created.batch.id;
    assert.equal(await cancelBatch(db, k, batchId, async () => undefined), 2);
    await ends.check(batchId);
    const events = await batchEvents(batchId);
    assert.deepEqual(
      events.map((event) => [event.subject, (event.body.batch as { status: string }).status]),
      [[subjects.batchCompleted, "cancelled"]],
    );
    const silent = await create(k, "pro", 1);
    assert.ok(silent.decision === "allowed");
    await cancelBatch(db, k, silent.batch.id, async () => undefined);
    await ends.check(silent.batch.id);
    assert.deepEqual(await batchEvents(silent.batch.id), [], "no webhook_url: nothing to call back");
    const row = await db.selectFrom("batches").select(["ended_at", "completed_at"]).where("batch_id", "=", silent.batch.id).executeTakeFirst();
    assert.ok(row?.ended_at && row.completed_at);
  });

  it("records an Idempotency-Key with the batch: the same body replays it, another is a reuse", async () => {
    const k = key();
    const first = await create(k, "pro", 2, { key: "month-end", requestDigest: "a" });
    assert.ok(first.decision === "allowed");
    const again = await create(k, "pro", 2, { key: "month-end", requestDigest: "a" });
    assert.ok(again.decision === "idempotent_replay");
    assert.equal(again.record.jobId, first.batch.id);
    assert.equal((await create(k, "pro", 2, { key: "month-end", requestDigest: "b" })).decision, "idempotency_key_reused");
    assert.equal((await readUsage(db, k, "pro")).rendersUsed, 2, "charged once");
  });
});

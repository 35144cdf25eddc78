import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { createDb, migrateToLatest, newId } from "@pressroom/platform";
import { PLANS } from "@pressroom/domain";
import { isolatedDatabase } from "@pressroom/stack";
import { sql, type Kysely } from "kysely";
import type { MeteringDb } from "../db";
import { migrations } from "../migrations";
import {
  admitRequest,
  expiringSlots,
  overdueSlots,
  readUsage,
  releaseAdmission,
  releaseForEvent,
  renewLease,
  setRendersUsed,
  sweep,
} from "./admission.repository";
import { periodOf } from "./period";

/**
 * The admission SQL against a real PostgreSQL: the window is sliding, the
 * quota is per UTC month with refunds once per job, slots are freed and
 * reclaimed. Times are chosen by writing rows relative to the database clock.
 * (Exactness across two metering processes is in test/src/metering-replicas.)
 */
describe("admission in PostgreSQL", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<MeteringDb>;
  const LEASE = 900;
  const key = () => `key_${randomBytes(8).toString("hex")}`;
  const admit = (keyId: string, plan: string, job = "") => admitRequest(db, { keyId, plan, renderJobId: job, leaseSeconds: LEASE });
  /** Rate events for a key, `secondsAgo` before the database's now. */
  const pastRequests = (keyId: string, count: number, secondsAgo: number) =>
    sql`insert into rate_events (key_id, at) select ${keyId}, clock_timestamp() - make_interval(secs => ${secondsAgo}) from generate_series(1, ${count})`.execute(
      db,
    );

  before(async () => {
    database = await isolatedDatabase("pressroom_metering_test");
    db = createDb<MeteringDb>({ url: database.url, schema: "metering", max: 20 });
    await migrateToLatest(db, "metering", migrations);
  });

  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  describe("the rate window: at most N in any 60 seconds, sliding", () => {
    it("counts every request and refuses the N+1st with the seconds until the oldest leaves", async () => {
      const k = key();
      for (let i = 1; i <= 10; i++) {
        const r = await admit(k, "free");
        assert.equal(r.decision, "allowed");
        assert.equal(r.rateLimit, 10);
        assert.equal(r.rateRemaining, 10 - i);
        assert.ok(r.rateReset >= 59 && r.rateReset <= 60, String(r.rateReset));
      }
      const refused = await admit(k, "free");
      assert.equal(refused.decision, "rate_limited");
      assert.equal(refused.rateRemaining, 0);
      assert.ok(refused.retryAfter >= 59 && refused.retryAfter <= 60, String(refused.retryAfter));
      assert.equal(refused.rateReset, refused.retryAfter);
      // A refusal does not count: still exactly 10 in the window.
      const { count } = await db
        .selectFrom("rate_events")
        .select((eb) => eb.fn.countAll<string>().as("count"))
        .where("key_id", "=", k)
        .executeTakeFirstOrThrow();
      assert.equal(Number(count), 10);
    });

    it("requests older than 60 s do not count; Retry-After is the wait until the oldest counted one leaves", async () => {
      const k = key();
      await pastRequests(k, 10, 60.5);
      const fresh = await admit(k, "free");
      assert.equal(fresh.decision, "allowed");
      assert.equal(fresh.rateRemaining, 9);

      const full = key();
      await pastRequests(full, 10, 30.2);
      const refused = await admit(full, "free");
      assert.equal(refused.decision, "rate_limited");
      assert.equal(refused.retryAfter, 30, "ceil(60 − 30.2) = 30");
    });

    it("slides: a burst just before a minute boundary is still counted just after it (no 2N across a boundary)", async () => {
      // 5 requests 59.4 s ago and 5 requests 10 s ago: a fixed per-minute
      // bucket would have reset for the first five; a sliding window frees
      // exactly those five when they turn 60 s old, and no more.
      const k = key();
      await pastRequests(k, 5, 59.4);
      await pastRequests(k, 5, 10);
      const refused = await admit(k, "free");
      assert.equal(refused.decision, "rate_limited");
      assert.equal(refused.retryAfter, 1, "the oldest leaves within a second");
      await new Promise((resolve) => setTimeout(resolve, 800));
      const decisions = [];
      for (let i = 0; i < 7; i++) decisions.push(await admit(k, "free"));
      assert.deepEqual(
        decisions.map((d) => d.decision),
        ["allowed", "allowed", "allowed", "allowed", "allowed", "rate_limited", "rate_limited"],
      );
      assert.ok(decisions[5]!.retryAfter >= 49 && decisions[5]!.retryAfter <= 51, `the next one leaves ~50 s from now: ${decisions[5]!.retryAfter}`);
    });

    it("a second decision for a request already counted (after finished jobs were settled) neither counts it again nor refuses it for rate", async () => {
      const k = key();
      for (let i = 0; i < 10; i++) await admit(k, "free");
      const again = await admitRequest(db, { keyId: k, plan: "free", renderJobId: newId("job"), leaseSeconds: LEASE, counted: true });
      assert.equal(again.decision, "allowed");
      assert.equal(again.rateRemaining, 0);
      const usage = await readUsage(db, k, "free");
      assert.deepEqual([usage.rateRemaining, usage.rendersUsed, usage.inFlight], [0, 1, 1]);
    });

    it("is exact under parallel calls on one key", async () => {
      const k = key();
      const results = await Promise.all(Array.from({ length: 40 }, () => admit(k, "free")));
      assert.equal(results.filter((r) => r.decision === "allowed").length, 10);
      assert.deepEqual(
        results
          .filter((r) => r.decision === "allowed")
          .map((r) => r.rateRemaining)
          .sort((a, b) => a - b),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      );
    });
  });

  describe("the monthly quota", () => {
    it("refuses a render once the month's quota is used, until the next UTC month", async () => {
      const k = key();
      await setRendersUsed(db, k, PLANS.free.rendersPerMonth);
      const refused = await admit(k, "free", newId("job"));
      assert.equal(refused.decision, "quota_exceeded");
      const untilNextMonth = (periodOf(new Date()).end.getTime() - Date.now()) / 1000;
      assert.ok(Math.abs(refused.retryAfter - untilNextMonth) <= 2, `${refused.retryAfter} vs ${untilNextMonth}`);
      // Not a render: only the rate window applies.
      assert.equal((await admit(k, "free")).decision, "allowed");
      // Last month's usage does not count this month.
      const other = key();
      await sql`insert into usage_periods (key_id, period_start, renders_used)
                values (${other}, (date_trunc('month', clock_timestamp() at time zone 'UTC') - interval '1 month')::date, 100)`.execute(db);
      assert.equal((await admit(other, "free", newId("job"))).decision, "allowed");
      assert.equal((await readUsage(db, other, "free")).rendersUsed, 1);
    });

    it("takes exactly the units left under parallel renders", async () => {
      const k = key();
      await setRendersUsed(db, k, PLANS.business.rendersPerMonth - 4);
      const results = await Promise.all(Array.from({ length: 10 }, () => admit(k, "business", newId("job"))));
      assert.equal(results.filter((r) => r.decision === "allowed").length, 4);
      assert.equal(results.filter((r) => r.decision === "quota_exceeded").length, 6);
      assert.equal((await readUsage(db, k, "business")).rendersUsed, PLANS.business.rendersPerMonth);
    });

    it("a merged document takes all its units or none, exactly under parallel calls", async () => {
      const k = key();
      await setRendersUsed(db, k, PLANS.business.rendersPerMonth - 10);
      const results = await Promise.all(
        Array.from({ length: 8 }, () => admitRequest(db, { keyId: k, plan: "business", renderJobId: newId("job"), leaseSeconds: LEASE, units: 3 })),
      );
      assert.equal(results.filter((r) => r.decision === "allowed").length, 3, "3 × 3 units fit in 10, a fourth does not");
      assert.equal(results.filter((r) => r.decision === "quota_exceeded").length, 5);
      assert.equal((await readUsage(db, k, "business")).rendersUsed, PLANS.business.rendersPerMonth - 1, "no partial charge");
      assert.equal((await admit(k, "business", newId("job"))).decision, "allowed", "the one unit left serves a single render");
    });

    it("refunds every unit of a merged document failed on our side, once", async () => {
      const k = key();
      const job = newId("job");
      assert.equal((await admitRequest(db, { keyId: k, plan: "starter", renderJobId: job, leaseSeconds: LEASE, units: 5 })).decision, "allowed");
      assert.equal((await admitRequest(db, { keyId: k, plan: "starter", renderJobId: job, leaseSeconds: LEASE, units: 5 })).decision, "allowed");
      assert.equal((await readUsage(db, k, "starter")).rendersUsed, 5, "a retried call charges nothing more");
      assert.deepEqual(await releaseForEvent(db, { eventId: newId("evt"), jobId: job, refund: true }), { released: true, refunded: true });
      assert.deepEqual(await releaseForEvent(db, { eventId: newId("evt"), jobId: job, refund: true }), { released: false, refunded: false });
      assert.equal((await readUsage(db, k, "starter")).rendersUsed, 0);
    });

    it("a job admitted twice (a retried call) is charged once", async () => {
      const k = key();
      const job = newId("job");
      assert.equal((await admit(k, "starter", job)).decision, "allowed");
      assert.equal((await admit(k, "starter", job)).decision, "allowed");
      const usage = await readUsage(db, k, "starter");
      assert.equal(usage.rendersUsed, 1);
      assert.equal(usage.inFlight, 1);
    });

    it("refunds a failure of ours once per job, even after its slot was reclaimed", async () => {
      const k = key();
      const job = newId("job");
      assert.equal((await admit(k, "free", job)).decision, "allowed");
      assert.equal((await readUsage(db, k, "free")).rendersUsed, 1);
      // The slot is lost and reclaimed by its lease; the failure arrives late.
      await sql`update slots set lease_expires_at = clock_timestamp() - interval '1 second' where job_id = ${job}`.execute(db);
      assert.equal((await admit(k, "free", newId("job"))).decision, "allowed", "the expired lease was reclaimed");
      assert.equal((await readUsage(db, k, "free")).rendersUsed, 2);
      const first = await releaseForEvent(db, { eventId: newId("evt"), jobId: job, refund: true });
      assert.deepEqual(first, { released: false, refunded: true });
      const again = newId("evt");
      assert.deepEqual(
        await releaseForEvent(db, { eventId: again, jobId: job, refund: true }),
        { released: false, refunded: false },
        "another event of the same job refunds nothing more",
      );
      assert.equal(await releaseForEvent(db, { eventId: again, jobId: job, refund: true }), "duplicate");
      assert.deepEqual(await releaseAdmission(db, { jobId: job, refund: true }), { released: false, refunded: false });
      assert.equal((await readUsage(db, k, "free")).rendersUsed, 1, "one refund for one job, however many events");
    });

    it("a render failed by the document is not refunded; its slot is freed", async () => {
      const k = key();
      const job = newId("job");
      await admit(k, "free", job);
      const event = newId("evt");
      assert.deepEqual(await releaseForEvent(db, { eventId: event, jobId: job, refund: false }), { released: true, refunded: false });
      const usage = await readUsage(db, k, "free");
      assert.equal(usage.rendersUsed, 1);
      assert.equal(usage.inFlight, 0);
      assert.equal(await releaseForEvent(db, { eventId: event, jobId: job, refund: false }), "duplicate", "the same event again");
      const other = newId("job");
      await admit(k, "free", other);
      assert.equal(await releaseForEvent(db, { eventId: event, jobId: other, refund: false }), "duplicate", "an event applied once frees nothing else");
      assert.equal((await readUsage(db, k, "free")).inFlight, 1, "the other job keeps its slot");
      assert.deepEqual(await releaseForEvent(db, { eventId: newId("evt"), jobId: other, refund: false }), { released: true, refunded: false });
      assert.deepEqual(await releaseForEvent(db, { eventId: newId("evt"), jobId: other, refund: false }), { released: false, refunded: false }, "already free");
    });
  });

  describe("concurrency slots", () => {
    it("holds at most the plan's renders in flight, freed by the terminal event", async () => {
      const k = key();
      const jobs = Array.from({ length: 5 }, () => newId("job"));
      const results = await Promise.all(jobs.map((job) => admit(k, "starter", job)));
      assert.equal(results.filter((r) => r.decision === "allowed").length, 2);
      assert.equal(results.filter((r) => r.decision === "concurrency_exceeded").length, 3);
      for (const r of results.filter((r) => r.decision === "concurrency_exceeded")) assert.ok(r.retryAfter >= 1);
      assert.equal((await readUsage(db, k, "starter")).rendersUsed, 2, "refusals take no quota");
      const held = jobs.filter((_, i) => results[i]!.decision === "allowed");
      await releaseForEvent(db, { eventId: newId("evt"), jobId: held[0]!, refund: false });
      assert.equal((await admit(k, "starter", newId("job"))).decision, "allowed");
      assert.equal((await admit(k, "starter", newId("job"))).decision, "concurrency_exceeded");
    });

    it("reclaims the slot of a lost job when its lease expires, so a crash cannot lock a key out", async () => {
      const k = key();
      const lost = newId("job");
      assert.equal((await admit(k, "free", lost)).decision, "allowed");
      assert.equal((await admit(k, "free", newId("job"))).decision, "concurrency_exceeded");
      const lease = await db.selectFrom("slots").select(["acquired_at", "lease_expires_at"]).where("job_id", "=", lost).executeTakeFirstOrThrow();
      assert.equal((lease.lease_expires_at.getTime() - lease.acquired_at.getTime()) / 1000, LEASE);
      await sql`update slots set lease_expires_at = clock_timestamp() - interval '1 millisecond' where job_id = ${lost}`.execute(db);
      assert.equal((await readUsage(db, k, "free")).inFlight, 0);
      assert.equal((await admit(k, "free", newId("job"))).decision, "allowed");
    });

    it("a job that starts renews its lease", async () => {
      const k = key();
      const job = newId("job");
      await admit(k, "free", job);
      await sql`update slots set lease_expires_at = clock_timestamp() + interval '5 seconds' where job_id = ${job}`.execute(db);
      assert.equal(await renewLease(db, job, LEASE), true);
      const { lease_expires_at } = await db.selectFrom("slots").select("lease_expires_at").where("job_id", "=", job).executeTakeFirstOrThrow();
      assert.ok(lease_expires_at.getTime() - Date.now() > (LEASE - 5) * 1000);
      assert.equal(await renewLease(db, "job_gone", LEASE), false);
    });

    it("an overdue job's slot is offered for renewal no more, and is listed as overdue whatever its lease", async () => {
      const HOUR_MS = 3_600_000;
      const [recent, overdue] = [newId("job"), newId("job")];
      await admit(key(), "free", recent);
      await admit(key(), "free", overdue);
      await sql`update slots set lease_expires_at = clock_timestamp() + interval '5 seconds' where job_id in (${recent}, ${overdue})`.execute(db);
      await sql`update slots set acquired_at = clock_timestamp() - interval '61 minutes' where job_id = ${overdue}`.execute(db);
      const expiring = await expiringSlots(db, LEASE / 2, HOUR_MS);
      assert.ok(expiring.includes(recent));
      assert.ok(!expiring.includes(overdue), "renewed no more");
      const late = await overdueSlots(db, HOUR_MS);
      assert.ok(late.includes(overdue));
      assert.ok(!late.includes(recent));
      await sql`update slots set lease_expires_at = clock_timestamp() - interval '1 second' where job_id = ${overdue}`.execute(db);
      assert.ok((await overdueSlots(db, HOUR_MS)).includes(overdue), "until the sweep deletes it");
    });

    it("an admission whose job was never submitted is released and refunded", async () => {
      const k = key();
      const job = newId("job");
      await admit(k, "free", job);
      assert.deepEqual(await releaseAdmission(db, { jobId: job, refund: true }), { released: true, refunded: true });
      const usage = await readUsage(db, k, "free");
      assert.deepEqual([usage.rendersUsed, usage.inFlight], [0, 0]);
      assert.equal((await admit(k, "free", newId("job"))).decision, "allowed");
    });

    it("a release refunds nothing once the job's slot is gone: a job that ran keeps its charge", async () => {
      const k = key();
      const job = newId("job");
      await admit(k, "free", job);
      assert.deepEqual(await releaseForEvent(db, { eventId: newId("evt"), jobId: job, refund: false }), { released: true, refunded: false });
      assert.deepEqual(await releaseAdmission(db, { jobId: job, refund: true }), { released: false, refunded: false });
      assert.equal((await readUsage(db, k, "free")).rendersUsed, 1);
    });
  });

  describe("usage", () => {
    it("reads what admit() decides from: the same window, month and slots", async () => {
      const k = key();
      await admit(k, "pro", newId("job"));
      const last = await admit(k, "pro");
      const usage = await readUsage(db, k, "pro");
      assert.equal(usage.rateRemaining, last.rateRemaining);
      assert.ok(Math.abs(usage.rateReset - last.rateReset) <= 1);
      assert.deepEqual([usage.rateLimit, usage.rendersLimit, usage.concurrencyLimit], [300, 10_000, 5]);
      assert.deepEqual([usage.rendersUsed, usage.inFlight], [1, 1]);
      const period = periodOf(new Date());
      assert.deepEqual([usage.periodStart, usage.periodEnd], [period.start, period.end]);
      const empty = await readUsage(db, key(), "demo");
      assert.deepEqual([empty.rateRemaining, empty.rateReset, empty.rendersUsed, empty.inFlight], [3, 0, 0, 0]);
    });

    it("an operator correction returns the previous value", async () => {
      const k = key();
      await admit(k, "free", newId("job"));
      assert.equal((await setRendersUsed(db, k, 40)).previous, 1);
      assert.equal((await setRendersUsed(db, k, 0)).previous, 40);
      assert.equal((await readUsage(db, k, "free")).rendersUsed, 0);
    });
  });

  it("the sweep removes only what no decision needs", async () => {
    const k = key();
    const job = newId("job");
    await admit(k, "pro", job);
    await pastRequests(k, 3, 61);
    await pastRequests(k, 2, 5);
    await sql`update slots set lease_expires_at = clock_timestamp() - interval '1 second' where job_id = ${job}`.execute(db);
    const removed = await sweep(db);
    assert.ok(removed.rateEvents >= 3 && removed.slots >= 1);
    assert.equal((await readUsage(db, k, "pro")).rateRemaining, 300 - 3);
  });
});

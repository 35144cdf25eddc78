import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { createDb, migrateToLatest, newId } from "@pressroom/platform";
import { PLANS } from "@pressroom/domain";
import { isolatedDatabase } from "@pressroom/stack";
import { sql, type Kysely } from "kysely";
import type { MeteringDb } from "../db";
import { migrations } from "../migrations";
import { admitRequest, readUsage, releaseAdmission, releaseForEvent } from "./admission.repository";

/**
 * Test mode (issue 46): a test job holds one of the key's concurrency slots like a render and
 * counts against a daily allowance of its own (the UTC day), refunded to the day it was taken
 * from, never touching the month's renders. Real PostgreSQL, the admit() function itself.
 */
describe("test-mode admission in PostgreSQL", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<MeteringDb>;
  const key = () => `key_${randomBytes(8).toString("hex")}`;
  const render = (keyId: string, plan: string, job = newId("job")) => admitRequest(db, { keyId, plan, renderJobId: job, leaseSeconds: 900 });
  const test = (keyId: string, plan: string, job = newId("job"), units = 1) =>
    admitRequest(db, { keyId, plan, renderJobId: job, leaseSeconds: 900, kind: "test", units });
  const today = async () => (await sql<{ day: string }>`select (clock_timestamp() at time zone 'UTC')::date::text as day`.execute(db)).rows[0]!.day;
  const usedOn = async (keyId: string, day: string) =>
    Number((await sql<{ used: string }>`select used from test_days where key_id = ${keyId} and day = ${day}::date`.execute(db)).rows[0]?.used ?? -1);

  before(async () => {
    database = await isolatedDatabase("pressroom_metering_test_mode");
    db = createDb<MeteringDb>({ url: database.url, schema: "metering", max: 10 });
    await migrateToLatest(db, "metering", migrations);
  });

  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it("counts a test job against the day's test allowance, never the month's renders, and GetUsage shows it", async () => {
    const k = key();
    const job = newId("job");
    assert.equal((await test(k, "starter", job)).decision, "allowed");
    const usage = await readUsage(db, k, "starter");
    assert.equal(usage.testUsed, 1);
    assert.equal(usage.testLimit, PLANS.starter.testRendersPerDay);
    assert.equal(usage.rendersUsed, 0, "the monthly quota did not move");
    assert.equal(usage.inFlight, 1, "it holds a slot like a render");
    const midnight = new Date(`${await today()}T00:00:00Z`).getTime() + 86_400_000;
    assert.equal(usage.dayEnd.getTime(), midnight, "the allowance starts again at the next UTC midnight");
  });

  it("takes a merged document's units all or none from the day's allowance", async () => {
    const k = key();
    await sql`insert into test_days (key_id, day, used) values (${k}, ${await today()}::date, ${PLANS.free.testRendersPerDay - 2})`.execute(db);
    assert.equal((await test(k, "free", newId("job"), 3)).decision, "quota_exceeded", "3 parts need 3 left, 2 are");
    assert.equal((await readUsage(db, k, "free")).testUsed, PLANS.free.testRendersPerDay - 2);
    assert.equal((await test(k, "free", newId("job"), 2)).decision, "allowed");
    assert.equal((await readUsage(db, k, "free")).testUsed, PLANS.free.testRendersPerDay);
  });

  it("refuses past the day's allowance until the next UTC midnight, while renders go on", async () => {
    const k = key();
    await sql`insert into test_days (key_id, day, used) values (${k}, ${await today()}::date, ${PLANS.pro.testRendersPerDay})`.execute(db);
    const refused = await test(k, "pro");
    assert.equal(refused.decision, "quota_exceeded");
    const { rows } = await sql<{
      left: string;
    }>`select extract(epoch from ((current_date + 1)::timestamp at time zone 'UTC') - clock_timestamp()) as left`.execute(db);
    assert.ok(Math.abs(refused.retryAfter - Math.ceil(Number(rows[0]!.left))) <= 2, `retry after ${refused.retryAfter} s: the time to midnight UTC`);
    assert.ok(refused.retryAfter <= 86_400);
    assert.equal((await render(k, "pro")).decision, "allowed", "renders have their own quota");
    assert.equal(PLANS.demo.testRendersPerDay > 0, true, "the demo key has an allowance too");
  });

  it("starts every UTC day from none: yesterday's full allowance does not refuse today", async () => {
    const k = key();
    const yesterday = (await sql<{ day: string }>`select ((clock_timestamp() at time zone 'UTC')::date - 1)::text as day`.execute(db)).rows[0]!.day;
    await sql`insert into test_days (key_id, day, used) values (${k}, ${yesterday}::date, ${PLANS.demo.testRendersPerDay})`.execute(db);
    assert.equal((await test(k, "demo")).decision, "allowed");
    assert.equal((await readUsage(db, k, "demo")).testUsed, 1);
  });

  it("refunds a test job to the day it was charged in, once, by Release or by its terminal event", async () => {
    const k = key();
    const lost = newId("job");
    const failed = newId("job");
    await render(k, "business");
    await test(k, "business", lost);
    await test(k, "business", failed);
    assert.equal((await readUsage(db, k, "business")).testUsed, 2);
    assert.deepEqual(await releaseAdmission(db, { jobId: lost, refund: true }), { released: true, refunded: true });
    assert.deepEqual(await releaseForEvent(db, { eventId: newId("evt"), jobId: failed, refund: true }), { released: true, refunded: true });
    assert.deepEqual(await releaseForEvent(db, { eventId: newId("evt"), jobId: failed, refund: true }), { released: false, refunded: false });
    const usage = await readUsage(db, k, "business");
    assert.equal(usage.testUsed, 0);
    assert.equal(usage.rendersUsed, 1, "the render's unit stays, and no refund touched the month");

    // A test job charged yesterday and refunded today gives its unit back to yesterday.
    const late = newId("job");
    await test(k, "business", late);
    const day = await today();
    await sql`update charges set period_start = period_start - 1 where job_id = ${late}`.execute(db);
    await sql`insert into test_days (key_id, day, used) values (${k}, ${day}::date - 1, 1)`.execute(db);
    await releaseForEvent(db, { eventId: newId("evt"), jobId: late, refund: true });
    const yesterday = (await sql<{ day: string }>`select (${day}::date - 1)::text as day`.execute(db)).rows[0]!.day;
    assert.equal(await usedOn(k, yesterday), 0);
    assert.equal(await usedOn(k, day), 1, "today's count keeps the unit it was not given");
  });
});

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { createDb, migrateToLatest, newId } from "@pressroom/platform";
import { PLANS } from "@pressroom/domain";
import { isolatedDatabase } from "@pressroom/stack";
import { sql, type Kysely } from "kysely";
import type { MeteringDb } from "../db";
import { migrations } from "../migrations";
import { admitRequest, readUsage, releaseAdmission, sweep } from "./admission.repository";

/**
 * Template previews are admitted like renders (issue 39): a preview holds one of the key's
 * concurrency slots, shared with its renders, and counts against a monthly preview allowance
 * of its own, refunded to that allowance. Real PostgreSQL, the admit() function itself.
 */
describe("preview admission in PostgreSQL", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<MeteringDb>;
  const key = () => `key_${randomBytes(8).toString("hex")}`;
  const render = (keyId: string, plan: string, job = newId("job")) => admitRequest(db, { keyId, plan, renderJobId: job, leaseSeconds: 900 });
  const preview = (keyId: string, plan: string, id = newId("pvw"), leaseSeconds = 120) =>
    admitRequest(db, { keyId, plan, renderJobId: id, leaseSeconds, kind: "preview" });

  before(async () => {
    database = await isolatedDatabase("pressroom_metering_previews");
    db = createDb<MeteringDb>({ url: database.url, schema: "metering", max: 10 });
    await migrateToLatest(db, "metering", migrations);
  });

  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it("counts a preview against the month's previews, never its renders, and GetUsage shows both", async () => {
    const k = key();
    const id = newId("pvw");
    assert.equal((await preview(k, "starter", id)).decision, "allowed");
    await releaseAdmission(db, { jobId: id, refund: false });
    const usage = await readUsage(db, k, "starter");
    assert.equal(usage.previewsUsed, 1);
    assert.equal(usage.previewsLimit, PLANS.starter.previewsPerMonth);
    assert.equal(usage.rendersUsed, 0);
    assert.equal(usage.inFlight, 0, "its slot was released");
  });

  it("shares the key's concurrency slots with its renders, both ways", async () => {
    const k = key();
    const job = newId("job");
    assert.equal((await render(k, "free", job)).decision, "allowed");
    assert.equal((await preview(k, "free")).decision, "concurrency_exceeded", "a free key rendering has no slot for a preview");
    await releaseAdmission(db, { jobId: job, refund: false });
    const id = newId("pvw");
    assert.equal((await preview(k, "free", id)).decision, "allowed");
    assert.equal((await render(k, "free")).decision, "concurrency_exceeded", "nor, previewing, for a render");
    assert.equal((await readUsage(db, k, "free")).inFlight, 1);
  });

  it("refuses a preview past the month's allowance, and the demo plan has none", async () => {
    const k = key();
    const period = (await readUsage(db, k, "free")).periodStart.toISOString().slice(0, 10);
    await sql`insert into usage_periods (key_id, period_start, renders_used, previews_used) values (${k}, ${period}::date, 0, ${PLANS.free.previewsPerMonth})`.execute(
      db,
    );
    const refused = await preview(k, "free");
    assert.equal(refused.decision, "quota_exceeded");
    assert.ok(refused.retryAfter >= 1);
    assert.equal((await render(k, "free")).decision, "allowed", "renders have their own quota");
    assert.equal(PLANS.demo.previewsPerMonth, 0);
    assert.equal((await preview(key(), "demo")).decision, "quota_exceeded");
  });

  it("is exact under parallel previews: exactly the plan's slots are taken", async () => {
    const k = key();
    const results = await Promise.all(Array.from({ length: 12 }, () => preview(k, "pro")));
    assert.equal(results.filter((r) => r.decision === "allowed").length, PLANS.pro.concurrentRenders);
    assert.equal((await readUsage(db, k, "pro")).previewsUsed, PLANS.pro.concurrentRenders);
  });

  it("refunds a preview to the previews it was charged to, once", async () => {
    const k = key();
    const id = newId("pvw");
    await render(k, "starter");
    await preview(k, "starter", id);
    assert.deepEqual(await releaseAdmission(db, { jobId: id, refund: true }), { released: true, refunded: true });
    assert.deepEqual(await releaseAdmission(db, { jobId: id, refund: true }), { released: false, refunded: false });
    const usage = await readUsage(db, k, "starter");
    assert.equal(usage.previewsUsed, 0);
    assert.equal(usage.rendersUsed, 1, "the render's unit stays");
  });

  it("frees a preview's slot by its own short lease when it is never released (the gateway died)", async () => {
    const k = key();
    const id = newId("pvw");
    assert.equal((await preview(k, "free", id, 120)).decision, "allowed");
    const { lease } = await db
      .selectFrom("slots")
      .select(sql<number>`extract(epoch from lease_expires_at - acquired_at)`.as("lease"))
      .where("job_id", "=", id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(lease), 120);
    await sql`update slots set lease_expires_at = clock_timestamp() - interval '1 second' where job_id = ${id}`.execute(db);
    await sweep(db);
    assert.equal((await preview(k, "free")).decision, "allowed");
  });
});

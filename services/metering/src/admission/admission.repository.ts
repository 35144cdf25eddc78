import { planOf, type Plan } from "@pressroom/domain";
import { sql, type Kysely } from "kysely";
import type { MeteringDb } from "../db";
import { periodOfStart } from "./period";

export type Decision = "allowed" | "rate_limited" | "quota_exceeded" | "concurrency_exceeded";

export interface AdmitResult {
  decision: Decision;
  rateLimit: number;
  rateRemaining: number;
  rateReset: number;
  retryAfter: number;
}

type Db = Kysely<MeteringDb>;

/**
 * What a job admitted is: a render (its units count against the month's renders), a template preview (against its
 * previews) or a test-mode render or image (against the UTC day's test allowance).
 */
export type AdmissionKind = "render" | "preview" | "test";

/** The limit of what `kind` counts against. */
function limitOf(plan: Plan, kind: AdmissionKind): number {
  if (kind === "preview") return plan.previewsPerMonth;
  if (kind === "test") return plan.testRendersPerDay;
  return plan.rendersPerMonth;
}

/**
 * One atomic admission decision: one statement, one round trip (see the
 * admit() SQL function of migration 20261128T054307, the latest to define
 * it: it adds test jobs to 20261127T230000's kinds). `counted`: decide again
 * for a request already counted in the rate window.
 */
export interface AdmitInput {
  keyId: string;
  plan: string;
  renderJobId: string;
  leaseSeconds: number;
  counted?: boolean;
  /** The quota units a render job takes, all or none (a merged document: one per part); default 1. */
  units?: number;
  /** Default "render". */
  kind?: AdmissionKind;
}

export async function admitRequest(db: Db, input: AdmitInput): Promise<AdmitResult> {
  const plan = planOf(input.plan);
  const kind = input.kind ?? "render";
  const limit = limitOf(plan, kind);
  const { rows } = await sql<{ decision: Decision; rate_remaining: number; rate_reset: number; retry_after: number }>`
    select decision, rate_remaining, rate_reset, retry_after
    from admit(${input.keyId}, ${plan.requestsPerMinute}, ${limit}, ${plan.concurrentRenders},
               ${input.renderJobId}, ${input.leaseSeconds}, ${input.counted ?? false}, ${input.units ?? 1}, ${kind})`.execute(db);
  const row = rows[0]!;
  return {
    decision: row.decision,
    rateLimit: plan.requestsPerMinute,
    rateRemaining: row.rate_remaining,
    rateReset: row.rate_reset,
    retryAfter: row.retry_after,
  };
}

export type ReleaseOutcome = { released: boolean; refunded: boolean };

/**
 * Frees a job's slot and, when asked, refunds its quota units to the period
 * and the count (renders or previews of its month, or tests of its UTC day) it was charged in. Refunds are once per job (the charge row remembers),
 * whatever the number of events or calls; the slot may already be gone
 * (reclaimed by its lease) and the refund still applies.
 */
async function releaseJob(trx: Db, jobId: string, refund: boolean): Promise<ReleaseOutcome> {
  const slot = await trx.deleteFrom("slots").where("job_id", "=", jobId).returning("key_id").executeTakeFirst();
  if (!refund) return { released: Boolean(slot), refunded: false };
  const charge = await trx
    .updateTable("charges")
    .set({ refunded_at: sql<Date>`clock_timestamp()` })
    .where("job_id", "=", jobId)
    .where("refunded_at", "is", null)
    .returning(["key_id", "units", "kind", sql<string>`period_start::text`.as("period")])
    .executeTakeFirst();
  if (charge?.kind === "test") {
    await trx
      .updateTable("test_days")
      .set({ used: sql`greatest(used - ${charge.units}, 0)` })
      .where("key_id", "=", charge.key_id)
      .where("day", "=", sql<Date>`${charge.period}::date`)
      .execute();
  } else if (charge) {
    await trx
      .updateTable("usage_periods")
      .set(
        charge.kind === "preview"
          ? { previews_used: sql`greatest(previews_used - ${charge.units}, 0)` }
          : { renders_used: sql`greatest(renders_used - ${charge.units}, 0)` },
      )
      .where("key_id", "=", charge.key_id)
      .where("period_start", "=", sql<Date>`${charge.period}::date`)
      .execute();
  }
  return { released: Boolean(slot), refunded: Boolean(charge) };
}

/**
 * A job's terminal event: idempotent per event (recorded in the same
 * transaction). Without a refund, the common case, it is one statement: one
 * round trip instead of a transaction's four.
 */
export async function releaseForEvent(db: Db, input: { eventId: string; jobId: string; refund: boolean }): Promise<"duplicate" | ReleaseOutcome> {
  if (!input.refund) {
    const { rows } = await sql<{ fresh: boolean; released: boolean }>`
      with fresh as (insert into processed_events (event_id) values (${input.eventId}) on conflict do nothing returning event_id),
           freed as (delete from slots where job_id = ${input.jobId} and exists (select from fresh) returning job_id)
      select exists (select from fresh) as fresh, exists (select from freed) as released`.execute(db);
    const row = rows[0]!;
    return row.fresh ? { released: row.released, refunded: false } : "duplicate";
  }
  return db.transaction().execute(async (trx) => {
    const fresh = await trx
      .insertInto("processed_events")
      .values({ event_id: input.eventId })
      .onConflict((oc) => oc.doNothing())
      .returning("event_id")
      .executeTakeFirst();
    if (!fresh) return "duplicate";
    return releaseJob(trx, input.jobId, input.refund);
  });
}

/**
 * An admitted job that was never submitted (the gateway could not publish it;
 * the sweep found it lost), released only while it holds its slot: a job
 * whose slot is gone ran, and what it is due is for its terminal event to
 * give back, so the caller of Release (the gateway) cannot refund a job that
 * ended. Idempotent.
 */
export async function releaseAdmission(db: Db, input: { jobId: string; refund: boolean }): Promise<ReleaseOutcome> {
  return db.transaction().execute(async (trx) => {
    const held = await trx.selectFrom("slots").select("job_id").where("job_id", "=", input.jobId).forUpdate().executeTakeFirst();
    return held ? releaseJob(trx, input.jobId, input.refund) : { released: false, refunded: false };
  });
}

/** The jobs holding a key's slots now. */
export async function heldJobs(db: Db, keyId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("slots")
    .select("job_id")
    .where("key_id", "=", keyId)
    .where("lease_expires_at", ">=", sql<Date>`clock_timestamp()`)
    .execute();
  return rows.map((row) => row.job_id);
}

/** A job that started keeps its slot for another lease from now (a long queue must not reclaim it). */
export async function renewLease(db: Db, jobId: string, leaseSeconds: number): Promise<boolean> {
  const result = await db
    .updateTable("slots")
    .set({ lease_expires_at: sql<Date>`greatest(lease_expires_at, clock_timestamp() + make_interval(secs => ${leaseSeconds}))` })
    .where("job_id", "=", jobId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The jobs whose slot's lease has ended (at most `limit`). */
export async function expiredSlots(db: Db, limit = 500): Promise<string[]> {
  const rows = await db
    .selectFrom("slots")
    .select("job_id")
    .where("lease_expires_at", "<", sql<Date>`clock_timestamp()`)
    .limit(limit)
    .execute();
  return rows.map((row) => row.job_id);
}

/** The jobs whose slot's lease ends within `withinSeconds` (and has not ended yet), acquired less than `acquiredWithinMs` ago. */
export async function expiringSlots(db: Db, withinSeconds: number, acquiredWithinMs: number): Promise<string[]> {
  const rows = await db
    .selectFrom("slots")
    .select("job_id")
    .where("lease_expires_at", ">=", sql<Date>`clock_timestamp()`)
    .where("lease_expires_at", "<", sql<Date>`clock_timestamp() + make_interval(secs => ${withinSeconds})`)
    .where("acquired_at", ">", sql<Date>`clock_timestamp() - make_interval(secs => ${acquiredWithinMs / 1000})`)
    .execute();
  return rows.map((row) => row.job_id);
}

/** The jobs whose slot was acquired `olderThanMs` ago or more, whatever its lease (at most `limit`). */
export async function overdueSlots(db: Db, olderThanMs: number, limit = 500): Promise<string[]> {
  const rows = await db
    .selectFrom("slots")
    .select("job_id")
    .where("acquired_at", "<=", sql<Date>`clock_timestamp() - make_interval(secs => ${olderThanMs / 1000})`)
    .orderBy("acquired_at")
    .limit(limit)
    .execute();
  return rows.map((row) => row.job_id);
}

export interface UsageSnapshot {
  plan: string;
  periodStart: Date;
  periodEnd: Date;
  rendersUsed: number;
  rendersLimit: number;
  rateLimit: number;
  rateRemaining: number;
  rateReset: number;
  concurrencyLimit: number;
  inFlight: number;
  previewsUsed: number;
  previewsLimit: number;
  /** Test-mode units used on the current UTC day, against the plan's daily allowance, which starts again at dayEnd. */
  testUsed: number;
  testLimit: number;
  dayEnd: Date;
}

/**
 * The key's standing now, in one statement on the database clock, by the
 * same rules as admit() (without counting): the window (now − 60 s, now],
 * the UTC month (the UTC day for test mode), the slots whose lease has not expired.
 */
export async function readUsage(db: Db, keyId: string, planId: string): Promise<UsageSnapshot> {
  const plan = planOf(planId);
  const { rows } = await sql<{
    period: string;
    used: string | null;
    previews: string | null;
    tests: string | null;
    day: string;
    rate_count: string;
    reset_ms: string | null;
    in_flight: string;
  }>`
    with t as (select clock_timestamp() as now),
    p as (select now, date_trunc('month', now at time zone 'UTC')::date as period, (now at time zone 'UTC')::date as day from t)
    select
      p.period::text as period,
      p.day::text as day,
      (select used from test_days d where d.key_id = ${keyId} and d.day = p.day) as tests,
      (select renders_used from usage_periods u where u.key_id = ${keyId} and u.period_start = p.period) as used,
      (select previews_used from usage_periods u where u.key_id = ${keyId} and u.period_start = p.period) as previews,
      (select count(*) from rate_events r where r.key_id = ${keyId} and r.at > p.now - interval '60 seconds') as rate_count,
      (select extract(epoch from (min(r.at) + interval '60 seconds' - p.now)) * 1000
         from rate_events r where r.key_id = ${keyId} and r.at > p.now - interval '60 seconds') as reset_ms,
      (select count(*) from slots s where s.key_id = ${keyId} and s.lease_expires_at >= p.now) as in_flight
    from p`.execute(db);
  const row = rows[0]!;
  const rateCount = Number(row.rate_count);
  const period = periodOfStart(row.period);
  return {
    plan: planId,
    periodStart: period.start,
    periodEnd: period.end,
    rendersUsed: Number(row.used ?? 0),
    rendersLimit: plan.rendersPerMonth,
    rateLimit: plan.requestsPerMinute,
    rateRemaining: Math.max(0, plan.requestsPerMinute - rateCount),
    rateReset: row.reset_ms === null ? 0 : Math.max(1, Math.ceil(Number(row.reset_ms) / 1000)),
    concurrencyLimit: plan.concurrentRenders,
    inFlight: Number(row.in_flight),
    previewsUsed: Number(row.previews ?? 0),
    previewsLimit: plan.previewsPerMonth,
    testUsed: Number(row.tests ?? 0),
    testLimit: plan.testRendersPerDay,
    dayEnd: new Date(Date.parse(`${row.day}T00:00:00Z`) + 86_400_000),
  };
}

/**
 * Operator correction of a key's renders used in the current period (UTC
 * month of the database clock), serialised with admit() by the same lock.
 * Returns the previous value and the period.
 */
export async function setRendersUsed(db: Db, keyId: string, used: number): Promise<{ previous: number; periodStart: Date }> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`metering:${keyId}`}, 0))`.execute(trx);
    const { rows } = await sql<{ period: string }>`select date_trunc('month', clock_timestamp() at time zone 'UTC')::date::text as period`.execute(trx);
    const period = rows[0]!.period;
    const previous = await trx
      .selectFrom("usage_periods")
      .select("renders_used")
      .where("key_id", "=", keyId)
      .where("period_start", "=", sql<Date>`${period}::date`)
      .executeTakeFirst();
    await trx
      .insertInto("usage_periods")
      .values({ key_id: keyId, period_start: period, renders_used: used })
      .onConflict((oc) => oc.columns(["key_id", "period_start"]).doUpdateSet({ renders_used: used }))
      .execute();
    return { previous: Number(previous?.renders_used ?? 0), periodStart: periodOfStart(period).start };
  });
}

/**
 * Housekeeping any replica may run at any time (nothing here changes a
 * decision): rate events out of every window, expired leases, and the
 * processed-event records and charges older than the JOBS stream keeps
 * events (keepDays): while a job event can still be delivered, its record
 * must be there to make it a duplicate, and its job's charge to refund it
 * once. Idempotency records are swept apart (sweepIdempotencyKeys, 24 h).
 */
export async function sweep(db: Db, keepDays = 92): Promise<{ rateEvents: number; slots: number; processed: number; charges: number; batches: number }> {
  const rate = await sql`delete from rate_events where at <= clock_timestamp() - interval '60 seconds'`.execute(db);
  const slots = await sql`delete from slots where lease_expires_at < clock_timestamp()`.execute(db);
  const processed = await sql`delete from processed_events where processed_at < now() - make_interval(days => ${keepDays})`.execute(db);
  const charges = await sql`delete from charges where charged_at < now() - make_interval(days => ${keepDays})`.execute(db);
  // A batch whose items have all ended, once its charges are gone (its items' rows go with it).
  const batches = await sql`delete from batches b where created_at < now() - make_interval(days => ${keepDays})
    and not exists (select from batch_items i where i.batch_id = b.batch_id and i.status in ('queued', 'running'))`.execute(db);
  const n = (r: { numAffectedRows?: bigint }) => Number(r.numAffectedRows ?? 0n);
  return { rateEvents: n(rate), slots: n(slots), processed: n(processed), charges: n(charges), batches: n(batches) };
}

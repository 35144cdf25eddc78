import { planOf } from "@pressroom/domain";
import { sql, type Kysely, type Transaction } from "kysely";
import type { MeteringDb } from "../db";
import { IDEMPOTENCY_TTL_HOURS, type IdempotentRecord } from "../admission/idempotency.repository";

type Db = Kysely<MeteringDb>;

export interface BatchCounts {
  queued: number;
  running: number;
  succeeded: number;
  failed: number;
}

export interface BatchView {
  id: string;
  status: "accepted" | "running" | "completed" | "cancelled";
  total: number;
  counts: BatchCounts;
  createdAt: Date;
  /** The zip of the outputs, once storage has made it (archive batches only). */
  archive: { url: string; expiresAt: Date; sizeBytes: number } | null;
}

export interface NewBatch {
  keyId: string;
  plan: string;
  batchId: string;
  items: { jobId: string; command: Uint8Array; filename: string }[];
  idempotency?: { key: string; requestDigest: string };
  /** Called back once when every item has ended. */
  webhookUrl?: string;
  /** A zip of the succeeded items' outputs is made when the batch ends. */
  archive: boolean;
}

export type CreateBatchResult =
  | { decision: "allowed"; batch: BatchView }
  | { decision: "quota_exceeded"; retryAfterSeconds: number }
  | { decision: "idempotent_replay"; record: IdempotentRecord }
  | { decision: "idempotency_key_reused" };

/** The key's admission lock: the one admit() takes, so a batch's quota decision is exact beside the key's renders. */
export async function lockKey(trx: Transaction<MeteringDb>, keyId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`metering:${keyId}`}, 0))`.execute(trx);
}

/**
 * Admits a batch all or none: under the key's admission lock, on the database clock, one quota
 * unit per item if that many are left in the month (else nothing is written), a charge per
 * item, the batch and its items (queued, each with its render command), and the
 * Idempotency-Key's record. A key seen before is a replay (same digest) or a reuse.
 */
export async function createBatch(db: Db, input: NewBatch): Promise<CreateBatchResult> {
  return db.transaction().execute(async (trx) => {
    await lockKey(trx, input.keyId);
    if (input.idempotency) {
      const seen = await trx
        .selectFrom("idempotency_keys")
        .select(["request_digest", "job_id", "response_status", "response_body"])
        .where("key_id", "=", input.keyId)
        .where("idempotency_key", "=", input.idempotency.key)
        .where(sql<boolean>`created_at > now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})`)
        .executeTakeFirst();
      if (seen && seen.request_digest !== input.idempotency.requestDigest) return { decision: "idempotency_key_reused" };
      if (seen) return { decision: "idempotent_replay", record: { jobId: seen.job_id, status: seen.response_status ?? 0, bodyJson: seen.response_body ?? "" } };
    }
    const units = input.items.length;
    const { rows } = await sql<{ period: string; used: string; retry_after: number }>`
      with clock as (select clock_timestamp() as now, date_trunc('month', clock_timestamp() at time zone 'UTC')::date as period)
      select clock.period::text as period,
             coalesce((select renders_used from usage_periods u where u.key_id = ${input.keyId} and u.period_start = clock.period), 0)::text as used,
             greatest(1, ceil(extract(epoch from (((clock.period + interval '1 month')::timestamp at time zone 'UTC') - clock.now))))::int as retry_after
      from clock`.execute(trx);
    const { period, used, retry_after } = rows[0]!;
    if (Number(used) + units > planOf(input.plan).rendersPerMonth) return { decision: "quota_exceeded", retryAfterSeconds: retry_after };

    const now = sql<Date>`clock_timestamp()`;
    await trx
      .insertInto("charges")
      .values(
        input.items.map((item) => ({ job_id: item.jobId, key_id: input.keyId, period_start: period, charged_at: now, units: 1, kind: "render" as const })),
      )
      .execute();
    await sql`insert into usage_periods as u (key_id, period_start, renders_used) values (${input.keyId}, ${period}::date, ${units})
      on conflict (key_id, period_start) do update set renders_used = u.renders_used + ${units}`.execute(trx);
    await trx
      .insertInto("batches")
      .values({ batch_id: input.batchId, key_id: input.keyId, plan: input.plan, total: units, webhook_url: input.webhookUrl ?? null, archive: input.archive })
      .execute();
    await trx
      .insertInto("batch_items")
      .values(
        input.items.map((item, idx) => ({
          batch_id: input.batchId,
          idx,
          job_id: item.jobId,
          key_id: input.keyId,
          status: "queued" as const,
          command: Buffer.from(item.command),
          filename: item.filename,
        })),
      )
      .execute();
    if (input.idempotency) {
      await sql`
        insert into idempotency_keys (key_id, idempotency_key, request_digest, job_id, created_at)
        values (${input.keyId}, ${input.idempotency.key}, ${input.idempotency.requestDigest}, ${input.batchId}, now())
        on conflict (key_id, idempotency_key) do update
          set request_digest = excluded.request_digest, job_id = excluded.job_id, response_status = null, response_body = null, created_at = now()`.execute(
        trx,
      );
    }
    const batch = await readBatch(trx, input.keyId, input.batchId);
    return { decision: "allowed", batch: batch! };
  });
}

/** A key's batch with its live counts (a cancelled item counts as failed), or undefined. */
export async function readBatch(db: Db, keyId: string, batchId: string): Promise<BatchView | undefined> {
  const batch = await db
    .selectFrom("batches")
    .select(["batch_id", "total", "created_at", "cancelled_at", "archive_url", "archive_expires_at", "archive_size_bytes"])
    .where("batch_id", "=", batchId)
    .where("key_id", "=", keyId)
    .executeTakeFirst();
  if (!batch) return undefined;
  const rows = await db
    .selectFrom("batch_items")
    .select(["status", sql<number>`count(*)::int`.as("n")])
    .where("batch_id", "=", batchId)
    .groupBy("status")
    .execute();
  const count = (status: string) => rows.find((row) => row.status === status)?.n ?? 0;
  const counts = { queued: count("queued"), running: count("running"), succeeded: count("succeeded"), failed: count("failed") + count("cancelled") };
  const ended = counts.queued + counts.running === 0;
  const status = batch.cancelled_at ? "cancelled" : ended ? "completed" : counts.queued < batch.total ? "running" : "accepted";
  const archive =
    batch.archive_url && batch.archive_expires_at
      ? { url: batch.archive_url, expiresAt: batch.archive_expires_at, sizeBytes: Number(batch.archive_size_bytes ?? 0) }
      : null;
  return { id: batch.batch_id, status, total: batch.total, counts, createdAt: batch.created_at, archive };
}

export interface BatchItemRow {
  index: number;
  jobId: string;
  status: "queued" | "running" | "succeeded" | "failed";
}

/** A page of a key's batch items after `afterIndex`, in item order; `more` when others follow. */
export async function listBatchItems(
  db: Db,
  input: { keyId: string; batchId: string; afterIndex: number; limit: number },
): Promise<{ items: BatchItemRow[]; more: boolean }> {
  const rows = await db
    .selectFrom("batch_items")
    .select(["idx", "job_id", "status"])
    .where("batch_id", "=", input.batchId)
    .where("key_id", "=", input.keyId)
    .where("idx", ">", input.afterIndex)
    .orderBy("idx")
    .limit(input.limit + 1)
    .execute();
  const items = rows.slice(0, input.limit).map((row) => ({
    index: row.idx,
    jobId: row.job_id,
    status: row.status === "cancelled" ? ("failed" as const) : row.status,
  }));
  return { items, more: rows.length > input.limit };
}

/**
 * Cancels a key's batch: under the key's admission lock (so no item is dispatched meanwhile),
 * every item still queued is marked cancelled and its unit refunded (its charge remembers it,
 * so the job's own failure event refunds nothing more), and `endJobs` is given the cancelled
 * items' commands before the commit (render ends their jobs; a failure rolls it all back).
 * Returns how many were cancelled, or undefined for an unknown batch.
 */
export async function cancelBatch(
  db: Db,
  keyId: string,
  batchId: string,
  endJobs: (jobs: { jobId: string; command: Buffer }[]) => Promise<void>,
): Promise<number | undefined> {
  return db.transaction().execute(async (trx) => {
    await lockKey(trx, keyId);
    const batch = await trx
      .updateTable("batches")
      .set({ cancelled_at: sql<Date>`coalesce(cancelled_at, clock_timestamp())` })
      .where("batch_id", "=", batchId)
      .where("key_id", "=", keyId)
      .returning("batch_id")
      .executeTakeFirst();
    if (!batch) return undefined;
    const cancelled = await trx
      .selectFrom("batch_items")
      .select(["job_id", "command"])
      .where("batch_id", "=", batchId)
      .where("status", "=", "queued")
      .execute();
    // A cancelled item's command (its html and data) is not kept.
    await trx
      .updateTable("batch_items")
      .set({ status: "cancelled", ended_at: sql<Date>`clock_timestamp()`, command: null })
      .where("batch_id", "=", batchId)
      .where("status", "=", "queued")
      .execute();
    if (cancelled.length > 0) {
      const ids = cancelled.map((row) => row.job_id);
      const refunded = await trx
        .updateTable("charges")
        .set({ refunded_at: sql<Date>`clock_timestamp()` })
        .where("job_id", "in", ids)
        .where("refunded_at", "is", null)
        .returning(sql<string>`period_start::text`.as("period"))
        .execute();
      for (const [period, n] of countBy(refunded.map((row) => row.period))) {
        await sql`update usage_periods set renders_used = greatest(renders_used - ${n}, 0)
          where key_id = ${keyId} and period_start = ${period}::date`.execute(trx);
      }
    }
    await endJobs(cancelled.map((row) => ({ jobId: row.job_id, command: row.command ?? Buffer.alloc(0) })));
    return cancelled.length;
  });
}

function countBy(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

/** A batch item's job ended (its terminal event); returns its key when it was a running item, so that key's next items may go. */
export async function endBatchItem(db: Db, jobId: string, status: "succeeded" | "failed"): Promise<string | undefined> {
  const row = await db
    .updateTable("batch_items")
    .set({ status, ended_at: sql<Date>`clock_timestamp()` })
    .where("job_id", "=", jobId)
    .where("status", "in", ["queued", "running"])
    .returning("key_id")
    .executeTakeFirst();
  return row?.key_id;
}

/** The keys with items waiting for a slot. */
export async function keysWaiting(db: Db): Promise<string[]> {
  const rows = await db.selectFrom("batch_items").select("key_id").distinct().where("status", "=", "queued").execute();
  return rows.map((row) => row.key_id);
}

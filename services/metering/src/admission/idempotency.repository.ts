import { sql, type Kysely } from "kysely";
import type { MeteringDb } from "../db";
import { admitRequest, type AdmitResult } from "./admission.repository";

type Db = Kysely<MeteringDb>;

/** How long an Idempotency-Key is remembered. */
export const IDEMPOTENCY_TTL_HOURS = 24;

export interface IdempotentRecord {
  jobId: string;
  /** 0 while the first request has not been answered. */
  status: number;
  bodyJson: string;
}

export type IdempotentAdmitResult =
  | AdmitResult
  | (Omit<AdmitResult, "decision"> & { decision: "idempotent_replay"; record: IdempotentRecord })
  | (Omit<AdmitResult, "decision"> & { decision: "idempotency_key_reused" });

const fresh = sql<boolean>`created_at > now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})`;

function toRecord(row: { job_id: string; response_status: number | null; response_body: string | null }): IdempotentRecord {
  return { jobId: row.job_id, status: row.response_status ?? 0, bodyJson: row.response_body ?? "" };
}

/**
 * The admission decision for a request with an Idempotency-Key, under the
 * key's admission lock (the same advisory lock admit() takes; it is
 * re-entrant within the transaction), so it is exact across replicas: a key
 * seen before is a replay (same digest) or a reuse (another digest), and
 * takes nothing but its place in the rate window; a new key is admitted as
 * usual and, when allowed, recorded in the same transaction.
 */
export async function admitIdempotent(
  db: Db,
  input: Parameters<typeof admitRequest>[1] & { idempotencyKey: string; requestDigest: string },
): Promise<IdempotentAdmitResult> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`metering:${input.keyId}`}, 0))`.execute(trx);
    const seen = await trx
      .selectFrom("idempotency_keys")
      .select(["request_digest", "job_id", "response_status", "response_body"])
      .where("key_id", "=", input.keyId)
      .where("idempotency_key", "=", input.idempotencyKey)
      .where(fresh)
      .executeTakeFirst();
    if (seen) {
      const rate = await admitRequest(trx, { ...input, renderJobId: "" });
      if (rate.decision !== "allowed") return rate;
      if (seen.request_digest !== input.requestDigest) return { ...rate, decision: "idempotency_key_reused" };
      return { ...rate, decision: "idempotent_replay", record: toRecord(seen) };
    }
    const result = await admitRequest(trx, input);
    if (result.decision === "allowed") {
      // A record past its 24 h may still be there until the sweep: it is replaced.
      await sql`
        insert into idempotency_keys (key_id, idempotency_key, request_digest, job_id, created_at)
        values (${input.keyId}, ${input.idempotencyKey}, ${input.requestDigest}, ${input.renderJobId}, now())
        on conflict (key_id, idempotency_key) do update set
          request_digest = excluded.request_digest, job_id = excluded.job_id, created_at = excluded.created_at,
          response_status = null, response_body = null`.execute(trx);
    }
    return result;
  });
}

/** Records the first response of a key; a 5xx forgets the key instead, so that a retry runs again. */
export async function completeIdempotent(db: Db, input: { keyId: string; idempotencyKey: string; status: number; bodyJson: string }): Promise<void> {
  if (input.status >= 500) {
    await db.deleteFrom("idempotency_keys").where("key_id", "=", input.keyId).where("idempotency_key", "=", input.idempotencyKey).execute();
    return;
  }
  await db
    .updateTable("idempotency_keys")
    .set({ response_status: input.status, response_body: input.bodyJson })
    .where("key_id", "=", input.keyId)
    .where("idempotency_key", "=", input.idempotencyKey)
    .where("response_status", "is", null)
    .execute();
}

export async function readIdempotent(db: Db, keyId: string, idempotencyKey: string): Promise<IdempotentRecord | undefined> {
  const row = await db
    .selectFrom("idempotency_keys")
    .select(["job_id", "response_status", "response_body"])
    .where("key_id", "=", keyId)
    .where("idempotency_key", "=", idempotencyKey)
    .where(fresh)
    .executeTakeFirst();
  return row ? toRecord(row) : undefined;
}

/** Removes the records past their 24 h (any replica, any time). */
export async function sweepIdempotencyKeys(db: Db): Promise<number> {
  const result = await sql`delete from idempotency_keys where not (${fresh})`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

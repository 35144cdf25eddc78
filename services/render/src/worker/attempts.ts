import type { StoredJobEvent } from "@pressroom/domain";
import { sql, type Kysely } from "kysely";
import type { RenderDb } from "../db";

/** How an attempt ended without an outcome: the browser died under it, or it is tried again for another reason. */
export type AttemptEnd = "died" | "retried";

/** Deaths a job may be in flight at: at the next, it is a poison job, failed and charged (issue 39). */
export const POISON_DEATHS = 2;

/**
 * The ends of a job's attempts that ended without an outcome, kept where every replica reads
 * them (render's `attempt_ends` table): the worker that saw an attempt end writes it before the
 * attempt is tried again. An attempt with no end written died with its worker.
 */
export interface AttemptLog {
  record(jobId: string, attempt: number, end: AttemptEnd): Promise<void>;
  ends(jobId: string): Promise<ReadonlyMap<number, AttemptEnd>>;
}

const SWEPT_AFTER = "1 day";

export function attemptLog(db: Kysely<RenderDb>): AttemptLog {
  return {
    async record(jobId, attempt, end) {
      await db
        .insertInto("attempt_ends")
        .values({ job_id: jobId, attempt, ended: end })
        .onConflict((c) => c.columns(["job_id", "attempt"]).doUpdateSet({ ended: end }))
        .execute();
      // Jobs end within minutes: what is a day old belongs to jobs long ended.
      await db
        .deleteFrom("attempt_ends")
        .where("created_at", "<", sql<Date>`now() - ${SWEPT_AFTER}::interval`)
        .execute()
        .catch(() => undefined);
    },
    async ends(jobId) {
      const rows = await db.selectFrom("attempt_ends").select(["attempt", "ended"]).where("job_id", "=", jobId).execute();
      return new Map(rows.map((row) => [row.attempt, row.ended]));
    },
  };
}

/**
 * The deaths a job was in flight at before attempt `attempt`: the attempts whose end says the
 * browser died, and those that began (their job.started is in the history) and ended with no end
 * written, because their worker died with them.
 */
export function deathsBefore(attempt: number, history: readonly StoredJobEvent[], ends: ReadonlyMap<number, AttemptEnd>): number {
  const began = new Set(history.flatMap((stored) => (stored.event.type === "job.started" && stored.event.started ? [stored.event.started.attempt] : [])));
  let deaths = 0;
  for (let k = 1; k < attempt; k++) {
    const end = ends.get(k);
    if (end === "died" || (end === undefined && began.has(k))) deaths++;
  }
  return deaths;
}

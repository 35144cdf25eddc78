import { jobEventsV1 } from "@pressroom/contracts";
import { consumers } from "@pressroom/platform";
import { sql, type Kysely, type Transaction } from "kysely";
import type { WebhookDb } from "../db";
import { summarize } from "./summary";

/** The job audit projection's SQL (see audit-projection.consumer.ts). Its processed-event records are kept under this consumer's name. */
export const AUDIT_CONSUMER = consumers.auditProjection;

export interface StoredEvent {
  streamSeq: number;
  event: jobEventsV1.JobEvent;
}

function row(stored: StoredEvent) {
  const { event } = stored;
  return {
    event_id: event.id,
    stream_seq: stored.streamSeq,
    job_id: event.jobId,
    key_id: event.keyId,
    type: event.type,
    occurred_at: event.time,
    source: event.source,
    summary: JSON.stringify(summarize(event)),
  };
}

/**
 * Projects events in one transaction: each one's processed-event record and
 * its audit row, both skipped when already there (a redelivery). Returns how
 * many were new.
 */
export async function projectEvents(trx: Transaction<WebhookDb> | Kysely<WebhookDb>, events: StoredEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const fresh = await trx
    .insertInto("processed_events")
    .values(events.map((stored) => ({ consumer: AUDIT_CONSUMER, event_id: stored.event.id })))
    .onConflict((oc) => oc.columns(["consumer", "event_id"]).doNothing())
    .returning("event_id")
    .execute();
  const ids = new Set(fresh.map((r) => r.event_id));
  const rows = events.filter((stored) => ids.has(stored.event.id)).map(row);
  if (rows.length)
    await trx
      .insertInto("audit_job_events")
      .values(rows)
      .onConflict((oc) => oc.column("event_id").doNothing())
      .execute();
  return rows.length;
}

/**
 * Empties the projection (rows and processed-event records) inside the
 * caller's transaction, locking both tables until it commits so the live
 * consumer waits instead of writing in between. The lock order (processed
 * events, then rows) is the live consumer's, so the two cannot deadlock.
 */
export async function clearProjection(trx: Transaction<WebhookDb>): Promise<void> {
  await sql`lock table processed_events, audit_job_events in access exclusive mode`.execute(trx);
  await sql`truncate audit_job_events`.execute(trx);
  await trx.deleteFrom("processed_events").where("consumer", "=", AUDIT_CONSUMER).execute();
}

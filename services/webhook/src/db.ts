import type { ColumnType } from "kysely";

/** One row per job event: the audit projection of the JOBS stream (see audit/). */
export interface AuditJobEventRow {
  event_id: string;
  /** JetStream stream sequence in JOBS: the global order of events. */
  stream_seq: ColumnType<string, number | string, never>;
  job_id: string;
  key_id: string;
  type: string;
  occurred_at: ColumnType<Date, string, never>;
  source: string;
  /** A payload summary without secrets: no signed URL, no webhook URL (its host only), no document. */
  summary: ColumnType<Record<string, unknown>, string, never>;
}

export interface WebhookDb {
  audit_job_events: AuditJobEventRow;
  processed_events: {
    consumer: string;
    event_id: string;
    processed_at: ColumnType<Date, Date | undefined, never>;
  };
}

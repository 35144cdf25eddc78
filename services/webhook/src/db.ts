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

/** The read models (see read-models/): one row per job, per key and day, per callback delivery (attempt). */
export interface JobListRow {
  job_id: string;
  key_id: string;
  /** The JOBS stream sequence of its acceptance: the list's order and cursor. */
  accepted_seq: ColumnType<string, number | string, never>;
  kind: string;
  template_id: string | null;
  status: string;
  created_at: ColumnType<Date, string, never>;
  finished_at: ColumnType<Date | null, string | null | undefined, string | null>;
  /** Accepted with a webhook_url. */
  callback: boolean;
  terminal_event_id: string | null;
  terminal_event_type: string | null;
}

export interface JobDayRow {
  key_id: string;
  day: ColumnType<Date, string, never>;
  succeeded: number;
  failed: number;
  refunded: number;
}

export interface DeliveryRow {
  id: string;
  key_id: string;
  job_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status: "pending" | "succeeded" | "failed";
  response_status: number | null;
  duration_ms: number | null;
  created_at: ColumnType<Date, string, never>;
  next_retry_at: ColumnType<Date | null, string | null, string | null>;
  /** The JOBS stream sequence of the event that made the row: the list's order and cursor. */
  seq: ColumnType<string, number | string, never>;
  replay: boolean;
}

/** A batch's callback (delivery/batch-callback.consumer.ts). */
export interface BatchCallbackRow {
  batch_id: string;
  callback_id: string;
  key_id: string;
  url: string;
  body: string;
  ended_at: Date;
  state: ColumnType<"pending" | "delivered" | "exhausted", "pending" | undefined, "delivered" | "exhausted">;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Date | null;
  last_status: number | null;
  last_error: string | null;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface WebhookDb {
  batch_callbacks: BatchCallbackRow;
  audit_job_events: AuditJobEventRow;
  read_model_position: { name: string; last_seq: ColumnType<string, number | string, number | string> };
  job_list: JobListRow;
  job_days: JobDayRow;
  deliveries: DeliveryRow;
  processed_events: {
    consumer: string;
    event_id: string;
    processed_at: ColumnType<Date, Date | undefined, never>;
  };
}

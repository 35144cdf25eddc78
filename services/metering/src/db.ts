import type { ColumnType, Generated } from "kysely";

/** The metering schema, as the migrations leave it. */
export interface MeteringDb {
  rate_events: { id: Generated<string>; key_id: string; at: Date };
  usage_periods: {
    key_id: string;
    period_start: ColumnType<Date, string, string>;
    renders_used: ColumnType<string, number | undefined, number>;
    previews_used: ColumnType<string, number | undefined, number>;
  };
  /** Test-mode units a key used on a UTC day (issue 46). */
  test_days: { key_id: string; day: ColumnType<Date, string, string>; used: ColumnType<string, number | undefined, number> };
  slots: {
    job_id: string;
    key_id: string;
    period_start: ColumnType<Date, string, string>;
    acquired_at: ColumnType<Date, Date | undefined, never>;
    lease_expires_at: ColumnType<Date, Date, Date>;
  };
  /**
   * One row per render, preview or test job admitted: where its quota units went, of which count (kind), and whether they
   * were refunded. A test charge's period_start is its UTC day (test_days), a render's or preview's its month.
   */
  charges: {
    job_id: string;
    key_id: string;
    period_start: ColumnType<Date, string, never>;
    charged_at: ColumnType<Date, Date, never>;
    refunded_at: Date | null;
    units: ColumnType<number, number | undefined, never>;
    kind: ColumnType<AdmissionKindColumn, AdmissionKindColumn | undefined, never>;
  };
  processed_events: { event_id: string; processed_at: ColumnType<Date, Date | undefined, never> };
  checkout_sessions: {
    session_id: string;
    key_id: string;
    provider: "local" | "stripe";
    plan: string;
    from_plan: string;
    status: "open" | "completed";
    checkout_url: string;
    provider_session_id: string | null;
    confirm_token_hash: string | null;
    created_at: ColumnType<Date, Date | undefined, never>;
    expires_at: Date;
    completed_at: Date | null;
  };
  /** Idempotency-Key records (24 h): the first request's digest, job and, once answered, response. */
  idempotency_keys: {
    key_id: string;
    idempotency_key: string;
    request_digest: string;
    job_id: string;
    response_status: number | null;
    response_body: string | null;
    created_at: ColumnType<Date, Date | undefined, never>;
  };
  /** Batches (issue 42): their items wait in batch_items until a slot of their key is free. */
  batches: {
    batch_id: string;
    key_id: string;
    plan: string;
    total: number;
    created_at: ColumnType<Date, Date | undefined, never>;
    cancelled_at: Date | null;
    webhook_url: string | null;
    archive: ColumnType<boolean, boolean | undefined, boolean>;
    ended_at: Date | null;
    announced_at: Date | null;
    completed_at: Date | null;
    archive_url: string | null;
    archive_expires_at: Date | null;
    archive_size_bytes: ColumnType<string | null, number | null, number | null>;
  };
  batch_items: {
    batch_id: string;
    idx: number;
    job_id: string;
    key_id: string;
    status: BatchItemStatus;
    command: Buffer | null;
    dispatched_at: Date | null;
    ended_at: Date | null;
    filename: ColumnType<string, string | undefined, string>;
  };
  /** Stripe webhook events already handled (Stripe delivers at least once). */
  stripe_events: { event_id: string; type: string; outcome: string; received_at: ColumnType<Date, Date | undefined, never> };
}

export type AdmissionKindColumn = "render" | "preview" | "test";

export type BatchItemStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";

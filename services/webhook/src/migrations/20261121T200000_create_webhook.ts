import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("audit_job_events")
    .addColumn("event_id", "text", (c) => c.primaryKey())
    .addColumn("stream_seq", "bigint", (c) => c.notNull().unique())
    .addColumn("job_id", "text", (c) => c.notNull())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("occurred_at", "timestamptz", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("summary", "jsonb", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("audit_job_events_job").on("audit_job_events").columns(["job_id", "stream_seq"]).execute();
  await db.schema.createIndex("audit_job_events_key_time").on("audit_job_events").columns(["key_id", "occurred_at"]).execute();
  await db.schema.createIndex("audit_job_events_type_time").on("audit_job_events").columns(["type", "occurred_at"]).execute();

  await db.schema
    .createTable("processed_events")
    .addColumn("consumer", "text", (c) => c.notNull())
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("processed_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("processed_events_pk", ["consumer", "event_id"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("processed_events").execute();
  await db.schema.dropTable("audit_job_events").execute();
}

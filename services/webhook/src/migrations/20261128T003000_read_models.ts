import type { Kysely } from "kysely";

/**
 * The read models projected from the JOBS stream (src/read-models): each key's jobs, their
 * outcomes per day, and their callbacks' deliveries, with the stream position they are at.
 * Losing them (the tables emptied, the position row gone) is repaired by the projection itself,
 * which reads the stream again from its start.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("read_model_position")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("last_seq", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("job_list")
    .addColumn("job_id", "text", (c) => c.primaryKey())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("accepted_seq", "bigint", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("template_id", "text")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("finished_at", "timestamptz")
    .addColumn("callback", "boolean", (c) => c.notNull())
    .addColumn("terminal_event_id", "text")
    .addColumn("terminal_event_type", "text")
    .execute();
  await db.schema.createIndex("job_list_key_seq").on("job_list").columns(["key_id", "accepted_seq desc"]).execute();

  await db.schema
    .createTable("job_days")
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("day", "date", (c) => c.notNull())
    .addColumn("succeeded", "integer", (c) => c.notNull())
    .addColumn("failed", "integer", (c) => c.notNull())
    .addColumn("refunded", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("job_days_pk", ["key_id", "day"])
    .execute();

  await db.schema
    .createTable("deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("job_id", "text", (c) => c.notNull())
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("event_type", "text", (c) => c.notNull())
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("response_status", "integer")
    .addColumn("duration_ms", "integer")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("next_retry_at", "timestamptz")
    .addColumn("seq", "bigint", (c) => c.notNull())
    .addColumn("replay", "boolean", (c) => c.notNull())
    .addUniqueConstraint("deliveries_event_attempt", ["event_id", "attempt"])
    .execute();
  await db.schema.createIndex("deliveries_key_seq").on("deliveries").columns(["key_id", "seq desc"]).execute();
  await db.schema.createIndex("deliveries_job_seq").on("deliveries").columns(["job_id", "seq desc"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ["deliveries", "job_days", "job_list", "read_model_position"]) await db.schema.dropTable(table).execute();
}

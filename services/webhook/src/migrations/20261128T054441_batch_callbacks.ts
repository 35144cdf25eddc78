import { sql, type Kysely } from "kysely";

/**
 * Batch callbacks (issue 42): one row per batch with a webhook_url whose end metering announced
 * (batch.completed), keyed by the batch id, so however many copies of the event arrive the batch
 * is called back once. The body is kept as sent, so every attempt sends the same bytes; the
 * schedule (attempts made, the next one's due time) is the row's, as a job's is its events'.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("batch_callbacks")
    .addColumn("batch_id", "text", (c) => c.primaryKey())
    .addColumn("callback_id", "text", (c) => c.notNull())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("ended_at", "timestamptz", (c) => c.notNull())
    .addColumn("state", "text", (c) =>
      c
        .notNull()
        .defaultTo("pending")
        .check(sql`state in ('pending', 'delivered', 'exhausted')`),
    )
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "timestamptz")
    .addColumn("last_status", "integer")
    .addColumn("last_error", "text")
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("batch_callbacks").execute();
}

import { sql, type Kysely } from "kysely";

/**
 * A batch's end (issue 42): its callback and its archive.
 *
 * - `batches.webhook_url`: called back once (batch.completed) when every item has ended.
 * - `batches.archive`: a zip of the succeeded items' outputs is made when the batch ends;
 *   `archive_url`, `archive_expires_at`, `archive_size_bytes` once storage has made it.
 * - `batches.ended_at`: when metering saw every item ended; `announced_at`: when it last published
 *   what follows (the archive asked for, or the end); `completed_at`: when the end was announced
 *   (batch.completed published, after the archive when there is one).
 * - `batch_items.filename`: the item's options.filename, its name in the archive.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("batches")
    .addColumn("webhook_url", "text")
    .addColumn("archive", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("ended_at", "timestamptz")
    .addColumn("announced_at", "timestamptz")
    .addColumn("completed_at", "timestamptz")
    .addColumn("archive_url", "text")
    .addColumn("archive_expires_at", "timestamptz")
    .addColumn("archive_size_bytes", "bigint")
    .execute();
  await db.schema
    .alterTable("batch_items")
    .addColumn("filename", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  // What the sweep reads: batches whose end was seen but not announced.
  await sql`create index batches_unannounced on batches (ended_at) where completed_at is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index batches_unannounced`.execute(db);
  await db.schema.alterTable("batch_items").dropColumn("filename").execute();
  await db.schema
    .alterTable("batches")
    .dropColumn("webhook_url")
    .dropColumn("archive")
    .dropColumn("ended_at")
    .dropColumn("announced_at")
    .dropColumn("completed_at")
    .dropColumn("archive_url")
    .dropColumn("archive_expires_at")
    .dropColumn("archive_size_bytes")
    .execute();
}

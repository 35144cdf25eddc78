import { sql, type Kysely } from "kysely";

/**
 * Batches (issue 42): a batch's items are ordinary jobs admitted together (one quota unit each,
 * all or none, a `charges` row per item at once) that wait here, with their render command,
 * until one of their key's concurrency slots is free; then they are dispatched to the RENDER
 * queue with a slot, like any admitted job.
 *
 * - `batches`: one row per batch: its key, the plan whose concurrency its items run within,
 *   when it was cancelled.
 * - `batch_items`: one row per item: its job, `status` (queued: waiting here with its command;
 *   running: dispatched, holding a slot; succeeded, failed; cancelled: never dispatched, refunded).
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("batches")
    .addColumn("batch_id", "text", (c) => c.primaryKey())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("plan", "text", (c) => c.notNull())
    .addColumn("total", "integer", (c) => c.notNull().check(sql`total between 1 and 1000`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addColumn("cancelled_at", "timestamptz")
    .execute();
  await db.schema.createIndex("batches_key").on("batches").columns(["key_id", "created_at"]).execute();
  await db.schema
    .createTable("batch_items")
    .addColumn("batch_id", "text", (c) => c.notNull().references("batches.batch_id").onDelete("cascade"))
    .addColumn("idx", "integer", (c) => c.notNull())
    .addColumn("job_id", "text", (c) => c.notNull().unique())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('queued', 'running', 'succeeded', 'failed', 'cancelled')`))
    .addColumn("command", "bytea")
    .addColumn("dispatched_at", "timestamptz")
    .addColumn("ended_at", "timestamptz")
    .addPrimaryKeyConstraint("batch_items_pk", ["batch_id", "idx"])
    .execute();
  // What the dispatcher reads: a key's waiting items, oldest batch first.
  await sql`create index batch_items_waiting on batch_items (key_id, batch_id, idx) where status = 'queued'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("batch_items").execute();
  await db.schema.dropTable("batches").execute();
}

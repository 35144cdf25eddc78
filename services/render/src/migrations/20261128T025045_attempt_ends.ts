import { sql, type Kysely } from "kysely";

/**
 * How a render job's attempts ended when they ended without an outcome (issue 39: poison jobs):
 * `died` (the browser died under it) or `retried` (tried again for another reason). An attempt that
 * began (its job.started is in the job's history) and has no row here died with its worker. A job
 * in flight at two deaths is failed, charged, instead of being tried a third time. Rows older than
 * a day are swept as new ones are written.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("attempt_ends")
    .addColumn("job_id", "text", (c) => c.notNull())
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("ended", "text", (c) => c.notNull().check(sql`ended in ('died', 'retried')`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("attempt_ends_pk", ["job_id", "attempt"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("attempt_ends").execute();
}

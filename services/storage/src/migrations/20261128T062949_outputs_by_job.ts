import { sql, type Kysely } from "kysely";

/**
 * Outputs found by their job (issue 42): a batch's archive reads each succeeded item's output by
 * its job id, and is itself kept as an output whose job_id is its batch's id.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index outputs_by_job on outputs (job_id) where deleted_at is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index outputs_by_job`.execute(db);
}

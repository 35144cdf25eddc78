import { sql, type Kysely } from "kysely";

/**
 * A pdf template's preview became its first printed page (margins, header and footer drawn), where
 * it was a screenshot of its HTML at the paper's size. The public catalog's stored previews go, so
 * that the first read renders each again (free, like every read of them). An own template's stay
 * until its next version: rendering them again would count against its owner's previews.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`delete from previews where owner = ''`.execute(db);
}

export async function down(): Promise<void> {
  // Nothing to restore: the public catalog's previews are rendered again on their first read either way.
}

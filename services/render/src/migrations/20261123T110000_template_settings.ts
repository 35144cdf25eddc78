import { sql, type Kysely } from "kysely";

/**
 * A template's render settings from its manifest (`settings`), e.g.
 * `{"script_errors": "ignore"}` for a template whose script is known to throw
 * harmlessly. Existing versions get none: the defaults.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("templates")
    .addColumn("settings", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("templates").dropColumn("settings").execute();
}

import { sql, type Kysely } from "kysely";

/**
 * An own template version's default render options (issue 46, item 11): the JSON object of a request's
 * `options`, as the gateway checked it, which a request's own options override field by field. Existing
 * versions, and the built-in catalog's, get none.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("templates")
    .addColumn("options", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("templates").dropColumn("options").execute();
}

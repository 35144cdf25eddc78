import { sql, type Kysely } from "kysely";

/**
 * Template previews, stored (issue 39): each rendered once per version of a template (owner, id,
 * generation, version) and read from here by every replica, so reading a preview again renders
 * nothing and counts nothing. Only the current version's is kept: a new version's replaces the
 * earlier ones', and a delete removes them.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("previews")
    .addColumn("owner", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("generation", "integer", (c) => c.notNull())
    .addColumn("version", "integer", (c) => c.notNull())
    .addColumn("png", "bytea", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("previews_pk", ["owner", "id", "generation", "version"])
    .addForeignKeyConstraint("previews_template_fk", ["owner", "id", "generation", "version"], "templates", ["owner", "id", "generation", "version"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("previews").execute();
}

import { sql, type Kysely } from "kysely";

/**
 * Customers' own templates beside the built-in catalog: every version row gets
 * its owner (the account's key id; '' for the built-in catalog, which keeps its
 * rows as they are) in the primary key, and `deleted_at`, set on every version
 * of an own template when it is deleted (the versions stay for the jobs
 * admitted with them). An own template's assets are kept per version.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("templates")
    .addColumn("owner", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("deleted_at", "timestamptz")
    .execute();
  await db.schema.alterTable("templates").dropConstraint("templates_pk").execute();
  await db.schema.alterTable("templates").addPrimaryKeyConstraint("templates_pk", ["owner", "id", "version"]).execute();
  await db.schema
    .createTable("template_assets")
    .addColumn("owner", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("version", "integer", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("content", "bytea", (c) => c.notNull())
    .addPrimaryKeyConstraint("template_assets_pk", ["owner", "id", "version", "name"])
    .addForeignKeyConstraint("template_assets_version_fk", ["owner", "id", "version"], "templates", ["owner", "id", "version"])
    .execute();
  await sql`create index templates_owner_live on templates (owner, id) where deleted_at is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("template_assets").execute();
  await sql`delete from templates where owner <> ''`.execute(db);
  await db.schema.alterTable("templates").dropConstraint("templates_pk").execute();
  await db.schema.alterTable("templates").addPrimaryKeyConstraint("templates_pk", ["id", "version"]).execute();
  await sql`drop index templates_owner_live`.execute(db);
  await db.schema.alterTable("templates").dropColumn("owner").dropColumn("deleted_at").execute();
}

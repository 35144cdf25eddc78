import { sql, type Kysely } from "kysely";

/**
 * A template re-created after a delete starts again at version 1: each
 * incarnation of an (owner, id) is a `generation` (1 for the built-in catalog
 * and for every row made before this migration, whose versions were never
 * reused), in the primary keys of the versions and of their assets, so the
 * jobs admitted with an earlier generation's version still find exactly it.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("template_assets").dropConstraint("template_assets_version_fk").execute();
  await db.schema.alterTable("template_assets").dropConstraint("template_assets_pk").execute();
  await db.schema.alterTable("templates").dropConstraint("templates_pk").execute();
  await db.schema
    .alterTable("templates")
    .addColumn("generation", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable("template_assets")
    .addColumn("generation", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.alterTable("templates").addPrimaryKeyConstraint("templates_pk", ["owner", "id", "generation", "version"]).execute();
  await db.schema.alterTable("template_assets").addPrimaryKeyConstraint("template_assets_pk", ["owner", "id", "generation", "version", "name"]).execute();
  await db.schema
    .alterTable("template_assets")
    .addForeignKeyConstraint("template_assets_version_fk", ["owner", "id", "generation", "version"], "templates", ["owner", "id", "generation", "version"])
    .execute();
}

/** Keeps each template's latest generation only: the earlier ones' version numbers may repeat. */
export async function down(db: Kysely<unknown>): Promise<void> {
  const earlier = (table: string) =>
    sql`delete from ${sql.table(table)} t where t.generation < (select max(l.generation) from templates l where l.owner = t.owner and l.id = t.id)`;
  await earlier("template_assets").execute(db);
  await earlier("templates").execute(db);
  await db.schema.alterTable("template_assets").dropConstraint("template_assets_version_fk").execute();
  await db.schema.alterTable("template_assets").dropConstraint("template_assets_pk").execute();
  await db.schema.alterTable("templates").dropConstraint("templates_pk").execute();
  await db.schema.alterTable("templates").dropColumn("generation").execute();
  await db.schema.alterTable("template_assets").dropColumn("generation").execute();
  await db.schema.alterTable("templates").addPrimaryKeyConstraint("templates_pk", ["owner", "id", "version"]).execute();
  await db.schema.alterTable("template_assets").addPrimaryKeyConstraint("template_assets_pk", ["owner", "id", "version", "name"]).execute();
  await db.schema
    .alterTable("template_assets")
    .addForeignKeyConstraint("template_assets_version_fk", ["owner", "id", "version"], "templates", ["owner", "id", "version"])
    .execute();
}

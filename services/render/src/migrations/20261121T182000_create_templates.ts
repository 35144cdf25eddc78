import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("templates")
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("version", "integer", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    .addColumn("output", "text", (c) => c.notNull().check(sql`output in ('pdf', 'png')`))
    .addColumn("page", "jsonb")
    .addColumn("image", "jsonb")
    .addColumn("data_schema", "jsonb", (c) => c.notNull())
    .addColumn("sample_data", "jsonb", (c) => c.notNull())
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("content_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("templates_pk", ["id", "version"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("templates").execute();
}

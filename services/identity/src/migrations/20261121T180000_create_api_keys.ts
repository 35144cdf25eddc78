import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("api_keys")
    .addColumn("key_id", "text", (c) => c.primaryKey())
    .addColumn("key_hash", "bytea", (c) => c.notNull().unique())
    .addColumn("key_prefix", "text", (c) => c.notNull())
    .addColumn("email", "text")
    .addColumn("plan", "text", (c) => c.notNull())
    .addColumn("webhook_secret", "text", (c) => c.notNull())
    .addColumn("revoked_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index api_keys_email_unique on api_keys (lower(email)) where email is not null`.execute(db);

  await db.schema
    .createTable("signup_attempts")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("client_ip", "text", (c) => c.notNull())
    .addColumn("attempted_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("signup_attempts_ip_time").on("signup_attempts").columns(["client_ip", "attempted_at"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("signup_attempts").execute();
  await db.schema.dropTable("api_keys").execute();
}

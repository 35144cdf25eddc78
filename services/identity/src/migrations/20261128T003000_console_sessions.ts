import { sql, type Kysely } from "kysely";

/**
 * Console sessions: a key holder's browser exchanges the key for a session (its token in an
 * HttpOnly cookie), kept here as the token's SHA-256 with the key it stands for, its CSRF token
 * and its end. Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("console_sessions")
    .addColumn("token_hash", "bytea", (c) => c.primaryKey())
    .addColumn("key_id", "text", (c) => c.notNull().references("api_keys.key_id").onDelete("cascade"))
    .addColumn("csrf_token", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("console_sessions_expires").on("console_sessions").column("expires_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("console_sessions").execute();
}

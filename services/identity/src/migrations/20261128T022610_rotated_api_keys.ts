import { sql, type Kysely } from "kysely";

/**
 * Keys their holder rotates: the key a rotation replaced is kept as its SHA-256 in
 * `previous_key_hash` and still authenticates until `previous_key_expires_at` (at most 24 h
 * after the rotation); after that it is refused like a revoked key. The index serves the lookup
 * of a request's key among the previous ones. Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("api_keys").addColumn("previous_key_hash", "bytea").addColumn("previous_key_expires_at", "timestamptz").execute();
  await sql`create unique index api_keys_previous_key_hash on api_keys (previous_key_hash) where previous_key_hash is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index api_keys_previous_key_hash`.execute(db);
  await db.schema.alterTable("api_keys").dropColumn("previous_key_hash").dropColumn("previous_key_expires_at").execute();
}

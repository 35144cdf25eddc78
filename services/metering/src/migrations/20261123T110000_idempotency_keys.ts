import { sql, type Kysely } from "kysely";

/**
 * Idempotency-Key records: one per (API key, Idempotency-Key), written in the
 * same transaction (under the same per-key advisory lock) as the admission it
 * belongs to, so two gateways seeing the same key at once agree. Kept 24 h.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("idempotency_keys")
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("idempotency_key", "text", (c) => c.notNull())
    .addColumn("request_digest", "text", (c) => c.notNull())
    .addColumn("job_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("response_status", "integer")
    .addColumn("response_body", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("idempotency_keys_pk", ["key_id", "idempotency_key"])
    .execute();
  await db.schema.createIndex("idempotency_keys_created_at").on("idempotency_keys").column("created_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("idempotency_keys").execute();
}

import { sql, type Kysely } from "kysely";

/**
 * Every webhook secret a rotation replaced keeps signing until its own window ends, however many rotations follow:
 * `previous_webhook_secret_*` holds the one the last rotation replaced (as before), `older_webhook_secrets` those replaced
 * before it that are still live, newest first, each `{"sealed": …, "expires_at": …}` (sealed like the others, for the key).
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("api_keys")
    .addColumn("older_webhook_secrets", "jsonb", (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("api_keys").dropColumn("older_webhook_secrets").execute();
}

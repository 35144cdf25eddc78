import { type Kysely } from "kysely";

/**
 * Webhook secrets encrypted at rest, and rotation.
 *
 * - `webhook_secret_sealed`: the secret sealed with the service's encryption
 *   key (AES-256-GCM, see keys/secret-box.ts). The plaintext column
 *   `webhook_secret` becomes nullable: identity seals every plaintext secret
 *   left in it at start (and clears it), so existing keys keep their secret.
 *   A later migration drops the column once every deployment has run that.
 * - `previous_webhook_secret_sealed` / `previous_webhook_secret_expires_at`:
 *   the secret before the last rotation, still used to sign callbacks until
 *   it expires.
 *
 * Frozen in time: never import application code here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("api_keys")
    .addColumn("webhook_secret_sealed", "text")
    .addColumn("previous_webhook_secret_sealed", "text")
    .addColumn("previous_webhook_secret_expires_at", "timestamptz")
    .execute();
  await db.schema
    .alterTable("api_keys")
    .alterColumn("webhook_secret", (c) => c.dropNotNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("api_keys")
    .dropColumn("webhook_secret_sealed")
    .dropColumn("previous_webhook_secret_sealed")
    .dropColumn("previous_webhook_secret_expires_at")
    .execute();
}

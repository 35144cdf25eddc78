import { sql, type Transaction } from "kysely";
import type { WebhookDb } from "../db";

/**
 * Takes the delivery's advisory lock for the rest of the transaction, if no
 * other handler holds it; false when one does. Held by a transaction, so a
 * process that dies releases it.
 */
export async function tryLockDelivery(trx: Transaction<WebhookDb>, eventId: string): Promise<boolean> {
  const key = `webhook-delivery:${eventId}`;
  const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) as locked`.execute(trx);
  return Boolean(rows[0]?.locked);
}

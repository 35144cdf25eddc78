import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Kysely, Selectable, Transaction } from "kysely";
import type { MeteringDb } from "../db";

type Db = Kysely<MeteringDb> | Transaction<MeteringDb>;
export type SessionRow = Selectable<MeteringDb["checkout_sessions"]>;

export function insertSession(db: Db, row: Omit<SessionRow, "status" | "created_at" | "completed_at" | "confirm_token_hash">): Promise<SessionRow> {
  return db
    .insertInto("checkout_sessions")
    .values({ ...row, status: "open" })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findSession(db: Db, sessionId: string, options: { forUpdate?: boolean } = {}): Promise<SessionRow | undefined> {
  const query = db.selectFrom("checkout_sessions").selectAll().where("session_id", "=", sessionId);
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

export function findByProviderSession(
  db: Db,
  providerSessionId: string,
  sessionId: string,
  options: { forUpdate?: boolean } = {},
): Promise<SessionRow | undefined> {
  const query = db
    .selectFrom("checkout_sessions")
    .selectAll()
    .where((eb) => eb.or([eb("provider_session_id", "=", providerSessionId), eb("session_id", "=", sessionId)]))
    .where("provider", "=", "stripe");
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/**
 * Issues a fresh one-time confirm token for an open session and keeps only
 * its hash; the previous token stops working.
 */
export async function issueConfirmToken(db: Db, sessionId: string): Promise<string> {
  const token = randomBytes(32).toString("base64url");
  await db
    .updateTable("checkout_sessions")
    .set({ confirm_token_hash: hashToken(token) })
    .where("session_id", "=", sessionId)
    .where("status", "=", "open")
    .execute();
  return token;
}

/** Constant-time check of a presented token against the stored hash. */
export function tokenMatches(row: SessionRow, token: string): boolean {
  if (!row.confirm_token_hash || !token) return false;
  const expected = Buffer.from(row.confirm_token_hash, "hex");
  const actual = Buffer.from(hashToken(token), "hex");
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

export function completeSession(db: Db, sessionId: string): Promise<SessionRow> {
  return db
    .updateTable("checkout_sessions")
    .set((eb) => ({ status: "completed", confirm_token_hash: null, completed_at: eb.fn<Date>("clock_timestamp") }))
    .where("session_id", "=", sessionId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Records a Stripe event id; false when it was recorded before (a redelivery). */
export async function recordStripeEvent(db: Db, event: { id: string; type: string }, outcome: string): Promise<boolean> {
  const inserted = await db
    .insertInto("stripe_events")
    .values({ event_id: event.id, type: event.type, outcome })
    .onConflict((oc) => oc.column("event_id").doNothing())
    .returning("event_id")
    .executeTakeFirst();
  return Boolean(inserted);
}

export async function setStripeEventOutcome(db: Db, eventId: string, outcome: string): Promise<void> {
  await db.updateTable("stripe_events").set({ outcome }).where("event_id", "=", eventId).execute();
}

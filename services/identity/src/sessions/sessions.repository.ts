import { createHash, randomBytes } from "node:crypto";
import { sql, type Kysely } from "kysely";
import type { IdentityDb } from "../db";
import type { KeyRow } from "../keys/keys.repository";

type Db = Kysely<IdentityDb>;

/** A console session lasts this long from its sign-in, whatever happens: hours, not days. */
export const SESSION_HOURS = 8;

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

const hashToken = (token: string) => createHash("sha256").update(token, "utf8").digest();
const newToken = () => randomBytes(32).toString("base64url");

export interface SessionRow {
  key: KeyRow;
  keyPrefix: string;
  csrfToken: string;
  expiresAt: Date;
}

/** A new session of the key: its token (answered once, stored as a hash) and CSRF token. Sessions past their end are deleted on the way. */
export async function createSession(db: Db, keyId: string): Promise<{ token: string; csrfToken: string; expiresAt: Date }> {
  await db
    .deleteFrom("console_sessions")
    .where("expires_at", "<", sql<Date>`now()`)
    .execute();
  const token = newToken();
  const csrfToken = newToken();
  const expiresAt = new Date(Date.now() + SESSION_HOURS * 3_600_000);
  await db
    .insertInto("console_sessions")
    .values({ token_hash: hashToken(token), key_id: keyId, csrf_token: csrfToken, expires_at: expiresAt })
    .execute();
  return { token, csrfToken, expiresAt };
}

/** The live session a token names: not expired, not signed out, its key not revoked. */
export async function findSession(db: Db, token: string): Promise<SessionRow | undefined> {
  if (!TOKEN.test(token)) return undefined;
  const row = await db
    .selectFrom("console_sessions as s")
    .innerJoin("api_keys as k", "k.key_id", "s.key_id")
    .select(["k.key_id", "k.email", "k.plan", "k.created_at", "k.key_prefix", "s.csrf_token", "s.expires_at"])
    .where("s.token_hash", "=", hashToken(token))
    .where("s.expires_at", ">", sql<Date>`now()`)
    .where("k.revoked_at", "is", null)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    key: { keyId: row.key_id, email: row.email, plan: row.plan, revoked: false, createdAt: row.created_at },
    keyPrefix: row.key_prefix,
    csrfToken: row.csrf_token,
    expiresAt: row.expires_at,
  };
}

/** Ends a session (sign-out); a token that names none is not an error. */
export async function deleteSession(db: Db, token: string): Promise<void> {
  if (!TOKEN.test(token)) return;
  await db.deleteFrom("console_sessions").where("token_hash", "=", hashToken(token)).execute();
}

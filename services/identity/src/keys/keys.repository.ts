import { sql, type Kysely } from "kysely";
import { newId } from "@pressroom/platform";
import { DEMO_KEY_ID } from "@pressroom/domain";
import type { IdentityDb, OlderWebhookSecret } from "../db";
import type { SecretBox } from "./secret-box";
import { generateApiKey, generateWebhookSecret, hashApiKey, hashesEqual, keyPrefix } from "./secrets";

export interface KeyRow {
  keyId: string;
  email: string | null;
  plan: string;
  revoked: boolean;
  createdAt: Date;
}

type Db = Kysely<IdentityDb>;

const columns = ["key_id", "email", "plan", "revoked_at", "created_at", "key_hash"] as const;

function toRow(row: { key_id: string; email: string | null; plan: string; revoked_at: Date | null; created_at: Date }): KeyRow {
  return { keyId: row.key_id, email: row.email, plan: row.plan, revoked: row.revoked_at !== null, createdAt: row.created_at };
}

/** The key an API key stands for: the key's current value, or the one its last rotation replaced until that one expires. */
export async function findByApiKey(db: Db, apiKey: string): Promise<KeyRow | undefined> {
  const hash = hashApiKey(apiKey);
  const row = await db
    .selectFrom("api_keys")
    .select([...columns, "previous_key_hash"])
    .where((eb) => eb.or([eb("key_hash", "=", hash), eb.and([eb("previous_key_hash", "=", hash), eb("previous_key_expires_at", ">", sql<Date>`now()`)])]))
    .executeTakeFirst();
  if (!row || !(hashesEqual(row.key_hash, hash) || (row.previous_key_hash !== null && hashesEqual(row.previous_key_hash, hash)))) return undefined;
  return toRow(row);
}

/** How long the key a rotation replaced still authenticates. */
export const PREVIOUS_KEY_HOURS = 24;

/**
 * Gives the key a new value, answered once and stored only as its hash; the replaced value
 * keeps authenticating for PREVIOUS_KEY_HOURS, then is refused. A rotation within that time ends
 * the older value at once. The key id (and with it the plan, usage, templates, jobs) stays.
 */
export async function rotateApiKey(db: Db, keyId: string): Promise<{ apiKey: string; previousExpiresAt: Date } | undefined> {
  const apiKey = generateApiKey();
  return db.transaction().execute(async (trx) => {
    const current = await trx
      .selectFrom("api_keys")
      .select("key_hash")
      .where("key_id", "=", keyId)
      .where("revoked_at", "is", null)
      .forUpdate()
      .executeTakeFirst();
    if (!current) return undefined;
    const updated = await trx
      .updateTable("api_keys")
      .set({
        key_hash: hashApiKey(apiKey),
        key_prefix: keyPrefix(apiKey),
        previous_key_hash: current.key_hash,
        previous_key_expires_at: sql<Date>`now() + make_interval(hours => ${PREVIOUS_KEY_HOURS})`,
      })
      .where("key_id", "=", keyId)
      .returning("previous_key_expires_at")
      .executeTakeFirstOrThrow();
    return { apiKey, previousExpiresAt: updated.previous_key_expires_at! };
  });
}

export async function findById(db: Db, keyId: string): Promise<KeyRow | undefined> {
  const row = await db.selectFrom("api_keys").select(columns).where("key_id", "=", keyId).executeTakeFirst();
  return row ? toRow(row) : undefined;
}

export class EmailExistsError extends Error {}

/** Creates a key and its webhook secret (sealed); the plain key is returned once and never stored. */
export async function createKey(db: Db, box: SecretBox, input: { email: string | null; plan: string }): Promise<{ apiKey: string; key: KeyRow }> {
  const apiKey = generateApiKey();
  const keyId = newId("key");
  try {
    const row = await db
      .insertInto("api_keys")
      .values({
        key_id: keyId,
        key_hash: hashApiKey(apiKey),
        key_prefix: keyPrefix(apiKey),
        email: input.email,
        plan: input.plan,
        webhook_secret_sealed: box.seal(keyId, generateWebhookSecret()),
      })
      .returning(["key_id", "email", "plan", "revoked_at", "created_at"])
      .executeTakeFirstOrThrow();
    return { apiKey, key: toRow(row) };
  } catch (err) {
    if ((err as { code?: string; constraint?: string }).code === "23505") throw new EmailExistsError("email exists");
    throw err;
  }
}

/** Ensures the well-known public demo key exists (idempotent, safe from every replica). */
export async function ensureDemoKey(db: Db, box: SecretBox, demoKey: string): Promise<void> {
  await db
    .insertInto("api_keys")
    .values({
      key_id: DEMO_KEY_ID,
      key_hash: hashApiKey(demoKey),
      key_prefix: keyPrefix(demoKey),
      email: null,
      plan: "demo",
      webhook_secret_sealed: box.seal(DEMO_KEY_ID, generateWebhookSecret()),
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function revokeKey(db: Db, keyId: string): Promise<KeyRow | undefined> {
  const row = await db
    .updateTable("api_keys")
    .set({ revoked_at: sql<Date>`coalesce(revoked_at, now())` })
    .where("key_id", "=", keyId)
    .returning(["key_id", "email", "plan", "revoked_at", "created_at"])
    .executeTakeFirst();
  return row ? toRow(row) : undefined;
}

/** Sets the plan and returns the previous one, atomically. */
export async function setPlan(db: Db, keyId: string, plan: string): Promise<{ key: KeyRow; previousPlan: string } | undefined> {
  return db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom("api_keys").select("plan").where("key_id", "=", keyId).forUpdate().executeTakeFirst();
    if (!current) return undefined;
    const row = await trx
      .updateTable("api_keys")
      .set({ plan })
      .where("key_id", "=", keyId)
      .returning(["key_id", "email", "plan", "revoked_at", "created_at"])
      .executeTakeFirstOrThrow();
    return { key: toRow(row), previousPlan: current.plan };
  });
}

/** How long callbacks are still signed with a secret a rotation replaced. */
export const PREVIOUS_SECRET_HOURS = 24;
/** The most replaced secrets that sign at once: a rotation past it ends the oldest's window early (each adds a signature to every callback). */
export const MAX_REPLACED_SECRETS = 10;

/** A secret a rotation replaced, signing until expiresAt. */
export interface ReplacedSecret {
  secret: string;
  expiresAt: Date;
}

export interface WebhookSecrets {
  secret: string;
  /** The secret the last rotation replaced, while it is still used (it signs callbacks beside the current one). */
  previous?: ReplacedSecret;
  /** The secrets replaced before it that still sign, each until its own window ends, newest first. */
  older: ReplacedSecret[];
}

type SecretColumns = {
  key_id: string;
  webhook_secret: string | null;
  webhook_secret_sealed: string | null;
  previous_webhook_secret_sealed: string | null;
  previous_webhook_secret_expires_at: Date | null;
  older_webhook_secrets: OlderWebhookSecret[];
};

const live = (expiresAt: Date | null | undefined): expiresAt is Date => expiresAt instanceof Date && expiresAt.getTime() > Date.now();

function openSecrets(box: SecretBox, row: SecretColumns): WebhookSecrets | undefined {
  const secret = row.webhook_secret_sealed ? box.open(row.key_id, row.webhook_secret_sealed) : row.webhook_secret;
  if (!secret) return undefined;
  const expiresAt = row.previous_webhook_secret_expires_at;
  const previous =
    row.previous_webhook_secret_sealed && live(expiresAt) ? { secret: box.open(row.key_id, row.previous_webhook_secret_sealed), expiresAt } : undefined;
  const older = row.older_webhook_secrets
    .map((old) => ({ sealed: old.sealed, expiresAt: new Date(old.expires_at) }))
    .filter((old) => live(old.expiresAt))
    .map((old) => ({ secret: box.open(row.key_id, old.sealed), expiresAt: old.expiresAt }));
  return previous ? { secret, previous, older } : { secret, older };
}

const secretColumns = [
  "key_id",
  "webhook_secret",
  "webhook_secret_sealed",
  "previous_webhook_secret_sealed",
  "previous_webhook_secret_expires_at",
  "older_webhook_secrets",
] as const;

export async function getWebhookSecrets(db: Db, box: SecretBox, keyId: string): Promise<WebhookSecrets | undefined> {
  const row = await db.selectFrom("api_keys").select(secretColumns).where("key_id", "=", keyId).executeTakeFirst();
  return row ? openSecrets(box, row) : undefined;
}

/**
 * Replaces the key's webhook secret with a new one; the replaced one keeps signing callbacks (beside the new one) for
 * PREVIOUS_SECRET_HOURS, and so does every secret replaced before it whose window has not ended (at most
 * MAX_REPLACED_SECRETS at once, the oldest dropped first): a second rotation does not cut the first one's window short.
 */
export async function rotateWebhookSecret(db: Db, box: SecretBox, keyId: string): Promise<WebhookSecrets | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("api_keys").select(secretColumns).where("key_id", "=", keyId).forUpdate().executeTakeFirst();
    const current = row && openSecrets(box, row);
    if (!current) return undefined;
    const secret = generateWebhookSecret();
    const older = [...(current.previous ? [current.previous] : []), ...current.older].slice(0, MAX_REPLACED_SECRETS - 1);
    const updated = await trx
      .updateTable("api_keys")
      .set({
        webhook_secret: null,
        webhook_secret_sealed: box.seal(keyId, secret),
        previous_webhook_secret_sealed: box.seal(keyId, current.secret),
        previous_webhook_secret_expires_at: sql<Date>`now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS})`,
        older_webhook_secrets: JSON.stringify(older.map((old) => ({ sealed: box.seal(keyId, old.secret), expires_at: old.expiresAt.toISOString() }))),
      })
      .where("key_id", "=", keyId)
      .returning("previous_webhook_secret_expires_at")
      .executeTakeFirstOrThrow();
    return { secret, previous: { secret: current.secret, expiresAt: updated.previous_webhook_secret_expires_at! }, older };
  });
}

/**
 * Seals the plaintext webhook secrets that keys made before encryption at
 * rest still have, and clears them. Idempotent and safe from every replica
 * at once (each row is changed only while it still holds the plaintext).
 */
export async function sealPlaintextSecrets(db: Db, box: SecretBox): Promise<number> {
  const rows = await db.selectFrom("api_keys").select(["key_id", "webhook_secret"]).where("webhook_secret", "is not", null).execute();
  let sealed = 0;
  for (const row of rows) {
    const result = await db
      .updateTable("api_keys")
      .set({ webhook_secret_sealed: box.seal(row.key_id, row.webhook_secret!), webhook_secret: null })
      .where("key_id", "=", row.key_id)
      .where("webhook_secret", "=", row.webhook_secret)
      .executeTakeFirst();
    sealed += Number(result.numUpdatedRows);
  }
  return sealed;
}

export interface SignupAttempt {
  allowed: boolean;
  /** When refused: seconds until the oldest attempt in the window leaves it. */
  retryAfterSeconds: number;
}

/**
 * Records a signup attempt for a client's bucket (see clientBucket in the platform kit) and says
 * whether it is within the limit of attempts in any hour. Serialised per
 * bucket with an advisory lock so parallel attempts cannot slip past the
 * limit; attempts older than the window are deleted on the way.
 */
export async function takeSignupAttempt(db: Db, bucket: string, limitPerHour: number): Promise<SignupAttempt> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`signup:${bucket}`}))`.execute(trx);
    await trx
      .deleteFrom("signup_attempts")
      .where("client_ip", "=", bucket)
      .where("attempted_at", "<=", sql<Date>`now() - interval '1 hour'`)
      .execute();
    const { count, oldest } = await trx
      .selectFrom("signup_attempts")
      .select((eb) => [eb.fn.countAll<string>().as("count"), eb.fn.min("attempted_at").as("oldest")])
      .where("client_ip", "=", bucket)
      .executeTakeFirstOrThrow();
    if (Number(count) >= limitPerHour) {
      const leavesAt = new Date(oldest as Date).getTime() + 3_600_000;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((leavesAt - Date.now()) / 1000)) };
    }
    await trx.insertInto("signup_attempts").values({ client_ip: bucket }).execute();
    return { allowed: true, retryAfterSeconds: 0 };
  });
}

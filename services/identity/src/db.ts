import type { ColumnType, Generated, JSONColumnType } from "kysely";

/** A webhook secret replaced before the last rotation, still signing until expires_at (ISO 8601). */
export interface OlderWebhookSecret {
  sealed: string;
  expires_at: string;
}

export interface ApiKeysTable {
  key_id: string;
  key_hash: Buffer;
  key_prefix: string;
  email: string | null;
  plan: string;
  /** Legacy plaintext secret: sealed into webhook_secret_sealed and cleared at identity's start. */
  webhook_secret: ColumnType<string | null, string | null | undefined, string | null>;
  webhook_secret_sealed: string | null;
  previous_webhook_secret_sealed: ColumnType<string | null, string | null | undefined, string | null>;
  previous_webhook_secret_expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The secrets replaced before the previous one that still sign, newest first (JSON). */
  older_webhook_secrets: JSONColumnType<OlderWebhookSecret[], string | undefined, string>;
  /** The key the last rotation replaced (its SHA-256): it still authenticates until previous_key_expires_at. */
  previous_key_hash: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
  previous_key_expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  revoked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export interface SignupAttemptsTable {
  id: Generated<string>;
  client_ip: string;
  attempted_at: ColumnType<Date, Date | undefined, never>;
}

/** A console session: the token's SHA-256 (the token itself is only in the browser's cookie). */
export interface ConsoleSessionsTable {
  token_hash: Buffer;
  key_id: string;
  csrf_token: string;
  created_at: ColumnType<Date, Date | undefined, never>;
  expires_at: Date;
}

export interface IdentityDb {
  api_keys: ApiKeysTable;
  signup_attempts: SignupAttemptsTable;
  console_sessions: ConsoleSessionsTable;
}

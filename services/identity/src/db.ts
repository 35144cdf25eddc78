import type { ColumnType, Generated } from "kysely";

export interface ApiKeysTable {
  key_id: string;
  key_hash: Buffer;
  key_prefix: string;
  email: string | null;
  plan: string;
  webhook_secret: string;
  revoked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export interface SignupAttemptsTable {
  id: Generated<string>;
  client_ip: string;
  attempted_at: ColumnType<Date, Date | undefined, never>;
}

export interface IdentityDb {
  api_keys: ApiKeysTable;
  signup_attempts: SignupAttemptsTable;
}

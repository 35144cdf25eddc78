import type { Migration } from "kysely";
import * as createApiKeys from "./20261121T180000_create_api_keys";
import * as sealedWebhookSecrets from "./20261123T110000_sealed_webhook_secrets";
import * as consoleSessions from "./20261128T003000_console_sessions";
import * as rotatedApiKeys from "./20261128T022610_rotated_api_keys";
import * as olderWebhookSecrets from "./20261128T061704_older_webhook_secrets";

/** Every migration of the identity schema, by timestamped name. */
export const migrations: Record<string, Migration> = {
  "20261121T180000_create_api_keys": createApiKeys,
  "20261123T110000_sealed_webhook_secrets": sealedWebhookSecrets,
  "20261128T003000_console_sessions": consoleSessions,
  "20261128T022610_rotated_api_keys": rotatedApiKeys,
  "20261128T061704_older_webhook_secrets": olderWebhookSecrets,
};

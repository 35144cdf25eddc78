import type { Migration } from "kysely";
import * as createWebhook from "./20261121T200000_create_webhook";

/** Every migration of the webhook schema, by timestamped name. */
export const migrations: Record<string, Migration> = {
  "20261121T200000_create_webhook": createWebhook,
};

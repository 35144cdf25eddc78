import type { Migration } from "kysely";
import * as createWebhook from "./20261121T200000_create_webhook";
import * as readModels from "./20261128T003000_read_models";
import * as batchCallbacks from "./20261128T054441_batch_callbacks";

/** Every migration of the webhook schema, by timestamped name. */
export const migrations: Record<string, Migration> = {
  "20261121T200000_create_webhook": createWebhook,
  "20261128T003000_read_models": readModels,
  "20261128T054441_batch_callbacks": batchCallbacks,
};

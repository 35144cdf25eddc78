import type { Migration } from "kysely";
import * as createApiKeys from "./20261121T180000_create_api_keys";

/** Every migration of the identity schema, by timestamped name. */
export const migrations: Record<string, Migration> = {
  "20261121T180000_create_api_keys": createApiKeys,
};

import type { Migration } from "kysely";
import * as createOutputs from "./20261121T181000_create_outputs";

/** Every migration of the storage schema, by timestamped name. */
export const migrations: Record<string, Migration> = {
  "20261121T181000_create_outputs": createOutputs,
};

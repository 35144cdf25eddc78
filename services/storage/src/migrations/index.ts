import type { Migration } from "kysely";
import * as createOutputs from "./20261121T181000_create_outputs";
import * as outputAttachment from "./20261126T160000_output_attachment";

/** Every migration of the storage schema, by timestamped name. */
export const migrations: Record<string, Migration> = {
  "20261121T181000_create_outputs": createOutputs,
  "20261126T160000_output_attachment": outputAttachment,
};

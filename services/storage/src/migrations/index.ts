import type { Migration } from "kysely";
import * as createOutputs from "./20261121T181000_create_outputs";
import * as outputAttachment from "./20261126T160000_output_attachment";
import * as outputsByJob from "./20261128T062949_outputs_by_job";

/** Every migration of the storage schema, by timestamped name. */
export const migrations: Record<string, Migration> = {
  "20261121T181000_create_outputs": createOutputs,
  "20261126T160000_output_attachment": outputAttachment,
  "20261128T062949_outputs_by_job": outputsByJob,
};

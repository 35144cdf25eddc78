import type { Migration } from "kysely";
import * as createTemplates from "./20261121T182000_create_templates";

/** Every migration of the render schema, by timestamped name. */
export const migrations: Record<string, Migration> = {
  "20261121T182000_create_templates": createTemplates,
};

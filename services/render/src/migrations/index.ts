import type { Migration } from "kysely";
import * as createTemplates from "./20261121T182000_create_templates";
import * as templateSettings from "./20261123T110000_template_settings";
import * as ownTemplates from "./20261126T153000_own_templates";
import * as templateGenerations from "./20261126T170000_template_generations";
import * as previews from "./20261127T230000_previews";
import * as attemptEnds from "./20261128T025045_attempt_ends";
import * as templateOptions from "./20261128T094500_template_options";
import * as printedPreviews from "./20261129T130000_printed_previews";

/** Every migration of the render schema, by timestamped name. */
export const migrations: Record<string, Migration> = {
  "20261121T182000_create_templates": createTemplates,
  "20261123T110000_template_settings": templateSettings,
  "20261126T153000_own_templates": ownTemplates,
  "20261126T170000_template_generations": templateGenerations,
  "20261127T230000_previews": previews,
  "20261128T025045_attempt_ends": attemptEnds,
  "20261128T094500_template_options": templateOptions,
  "20261129T130000_printed_previews": printedPreviews,
};

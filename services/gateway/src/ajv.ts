import { Ajv2020 } from "ajv/dist/2020";
import addFormats from "ajv-formats";

/**
 * The gateway's one JSON Schema (draft 2020-12) validator, for templates' data schemas: checked
 * when a template is stored (templates/request.ts), compiled for admissions (template-directory.ts). Each schema is
 * removed again right after it compiles: two templates (versions, accounts) may declare one $id.
 */
export const ajv = new Ajv2020({ allErrors: false, strict: false });
addFormats(ajv);

import { AppError } from "@pressroom/platform";

/** What a template id looks like: the API checks it, the catalog stores it, the OpenAPI document states it. */
export const TEMPLATE_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** The answer for a template id that names no template. */
export function templateNotFound(id: string): AppError {
  return new AppError("TEMPLATE_NOT_FOUND", `template "${id}" does not exist`, "List the available templates with GET /v1/templates.");
}

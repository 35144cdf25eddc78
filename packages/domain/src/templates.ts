import { AppError } from "@pressroom/platform";

/** What a template id looks like: the API checks it, the catalog stores it, the OpenAPI document states it. */
export const TEMPLATE_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** The answer for a template id that names no template. */
export function templateNotFound(id: string): AppError {
  return new AppError("TEMPLATE_NOT_FOUND", `template "${id}" does not exist`, "List the available templates with GET /v1/templates.");
}

/** The answer for a version that a template (which exists) does not have, naming the versions it has. */
export function templateVersionNotFound(id: string, version: number, versions: number[]): AppError {
  const have = versions.length === 0 ? "none" : versions.length === 1 ? `only ${versions[0]}` : `${Math.min(...versions)} to ${Math.max(...versions)}`;
  return new AppError(
    "TEMPLATE_VERSION_NOT_FOUND",
    `template "${id}" has no version ${version} (its versions: ${have})`,
    `List its versions with GET /v1/templates/${id}/versions and name one of them (without a version, the current one is used).`,
  );
}

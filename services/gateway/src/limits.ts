/** The size limits of a job's request, defined once: the validation, its messages and the OpenAPI document use these. */

/** Raw html of POST /v1/render, in UTF-8 bytes (512 KiB). */
export const MAX_HTML_BYTES = 524_288;
/** The data object of a job, as JSON (256 KiB): a job always fits NATS's default 1 MiB message. */
export const MAX_DATA_BYTES = 262_144;
/** Arrays and objects nested deeper than this are refused before parsing (deep nesting exhausts the stack later). */
export const MAX_JSON_DEPTH = 64;

/** 524288 → "524,288", as the messages and the document write sizes. */
export const grouped = (bytes: number): string => bytes.toLocaleString("en-US");

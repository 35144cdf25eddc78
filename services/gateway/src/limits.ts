/** The size limits of a job's request, defined once: the validation, its messages and the OpenAPI document use these. */

/** Raw html of POST /v1/render, in UTF-8 bytes (512 KiB). */
export const MAX_HTML_BYTES = 524_288;
/** The data object of a job, as JSON (256 KiB): a job always fits NATS's default 1 MiB message. */
export const MAX_DATA_BYTES = 262_144;
/** Arrays and objects nested deeper than this are refused before parsing (deep nesting exhausts the stack later). */
export const MAX_JSON_DEPTH = 64;

/** 524288 → "524,288", as the messages and the document write sizes. */
export const grouped = (bytes: number): string => bytes.toLocaleString("en-US");

/** An own template's data_schema, as JSON (64 KiB). */
export const MAX_SCHEMA_BYTES = 65_536;
/** One asset of an own template (1 MiB), and all of them together (5 MiB). */
export const MAX_ASSET_BYTES = 1_048_576;
export const MAX_ASSETS_BYTES = 5_242_880;
/** The body of POST /v1/templates and PUT /v1/templates/{id}: the html, the schema, the sample data and the assets as base64. */
export const MAX_TEMPLATE_BODY_BYTES = 8 * 1_048_576;
/** The body of POST /v1/batches: up to 1,000 items, each within its own operation's limits. */
export const MAX_BATCH_BODY_BYTES = 16 * 1_048_576;

import type { AppError, z } from "@pressroom/platform";
import type { Context } from "koa";
import { errors } from "./errors";
import { MAX_DATA_BYTES, MAX_HTML_BYTES, MAX_JSON_DEPTH, grouped } from "./limits";

/** How deep arrays and objects nest in JSON text, stopping once past `limit`; strings are skipped. */
export function jsonDepthOver(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++;
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > limit) return true;
    } else if (ch === 0x7d || ch === 0x5d) depth--;
  }
  return false;
}

/** A field's hints: when it is missing, and when it is there but invalid. */
export type FieldHints = Record<string, { required?: string; invalid?: string }>;

/**
 * The 422 for a body its schema (a strict zod object) refused: the first
 * failure in the schema's order of checks (unknown fields, then the checks of
 * the whole body, then each field in the order the schema lists them), its
 * message prefixed with the field's name. The hint is the failure's own, or
 * the field's from `hints`.
 */
export function bodyProblem(schema: z.ZodObject, body: Record<string, unknown>, error: z.ZodError, hints: FieldHints = {}): AppError {
  const fields = Object.keys(schema.shape);
  const rank = (issue: z.core.$ZodIssue) => (issue.code === "unrecognized_keys" ? 0 : issue.path.length === 0 ? 1 : 2 + fields.indexOf(String(issue.path[0])));
  const issue = error.issues.reduce((first, next) => (rank(next) < rank(first) ? next : first));
  const where = issue.path.join(".");
  if (issue.code === "unrecognized_keys") {
    const unknown = `unknown ${where ? "option" : "field"}${issue.keys.length > 1 ? "s" : ""}: ${issue.keys.join(", ")}`;
    return errors.payload(where ? `${where}: ${unknown}` : unknown, `Send only ${Object.keys(shapeAt(schema, issue.path)).join(", ")}.`);
  }
  const field = issue.path.length ? String(issue.path[0]) : undefined;
  const message = issue.code === "invalid_type" ? typeMessage(schema, body, issue) : issue.message;
  const own = issue.code === "custom" ? (issue.params as { hint?: string } | undefined)?.hint : undefined;
  const fieldHints = field === undefined ? undefined : hints[field];
  const hint = own ?? (body[field!] === undefined ? fieldHints?.required : fieldHints?.invalid);
  return errors.payload(field === undefined ? message : `${where}: ${message}`, hint);
}

/** The value at `path` in the body as sent. */
function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  let at = body;
  for (const key of path) at = at !== null && typeof at === "object" ? (at as Record<PropertyKey, unknown>)[key] : undefined;
  return at;
}

/**
 * A wrong type in words a reader can act on: a missing field "is required"; the validator's own text (a field
 * without a message of its own) is replaced, an object given as something else showing the object's shape with
 * its fields' examples (`{"top": "20mm", ...}`).
 */
function typeMessage(schema: z.ZodObject, body: unknown, issue: z.core.$ZodIssueInvalidType): string {
  if (valueAt(body, issue.path) === undefined) return "is required";
  if (!issue.message.startsWith("Invalid input")) return issue.message;
  if (issue.expected === "object") {
    const fields = Object.entries(shapeAt(schema, issue.path));
    if (fields.length > 0) {
      const example = (field: z.ZodType) => {
        const inner = "unwrap" in field && typeof field.unwrap === "function" ? (field.unwrap() as z.ZodType) : field;
        const examples = (inner.meta() as { examples?: unknown[] } | undefined)?.examples;
        return examples?.length ? JSON.stringify(examples[0]) : "…";
      };
      return `must be an object such as {${fields.map(([name, field]) => `"${name}": ${example(field as z.ZodType)}`).join(", ")}}`;
    }
  }
  return `must be ${issue.expected === "int" ? "an integer" : /^[aeiou]/.test(issue.expected) ? `an ${issue.expected}` : `a ${issue.expected}`}`;
}

/** The fields of the strict object at `path` inside `schema` (through optional wrappers and arrays). */
function shapeAt(schema: z.ZodObject, path: readonly PropertyKey[]): z.ZodRawShape {
  let at: z.ZodType = schema;
  for (const key of path) {
    while (!("shape" in at)) {
      if ("unwrap" in at && typeof at.unwrap === "function") at = at.unwrap() as z.ZodType;
      else if ("element" in at) at = at.element as z.ZodType;
      else return {};
    }
    if (typeof key === "number") continue;
    at = (at as z.ZodObject).shape[String(key)] as z.ZodType;
  }
  while ("unwrap" in at && typeof at.unwrap === "function") at = at.unwrap() as z.ZodType;
  return "shape" in at ? (at as z.ZodObject).shape : {};
}

/**
 * Reads a JSON object body with a size limit. A wrong content type, an
 * oversized or malformed body, or a non-object are all 422 PAYLOAD_INVALID.
 */
export async function readJsonObject(ctx: Context, maxBytes: number): Promise<Record<string, unknown>> {
  const type = ctx.request.type;
  if (type !== "application/json") {
    throw errors.payload(
      `request body must be JSON (Content-Type: application/json), got "${type || "none"}"`,
      "Send Content-Type: application/json with a JSON object body.",
    );
  }
  const tooLarge = () => {
    // Answer at once and close the connection rather than read the rest.
    ctx.set("Connection", "close");
    return errors.payload(
      `request body is larger than ${maxBytes} bytes`,
      `Send at most ${maxBytes} bytes (html at most ${grouped(MAX_HTML_BYTES)} bytes, data at most ${grouped(MAX_DATA_BYTES)} bytes as JSON).`,
    );
  };
  const declared = Number(ctx.get("content-length") || "0");
  if (declared > maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (jsonDepthOver(text, MAX_JSON_DEPTH)) {
    throw errors.payload(
      `request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`,
      `Flatten the data: at most ${MAX_JSON_DEPTH} levels of nesting.`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw errors.payload("request body is not valid JSON", "Send a well-formed JSON object.");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw errors.payload("request body must be a JSON object", 'Send a JSON object such as {"template_id": "invoice", "data": {}}.');
  }
  return parsed as Record<string, unknown>;
}

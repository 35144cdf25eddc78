import type { Context } from "koa";
import { errors } from "./errors";

/** Arrays and objects nested deeper than this are refused before parsing (deep nesting exhausts the stack later). */
export const MAX_JSON_DEPTH = 64;

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

/** Refuses a body with fields other than `allowed`, naming them. */
export function onlyFields(body: Record<string, unknown>, allowed: string[]): void {
  const unknown = Object.keys(body).filter((field) => !allowed.includes(field));
  if (unknown.length) throw errors.payload(`unknown field${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}`, `Send only ${allowed.join(", ")}.`);
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
      `Send at most ${maxBytes} bytes (html at most 524,288 bytes, data at most 262,144 bytes as JSON).`,
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

import type { Context } from "koa";
import { errors } from "./errors";

/**
 * Reads a JSON object body with a size limit. A wrong content type, an
 * oversized or malformed body, or a non-object are all 422 PAYLOAD_INVALID.
 */
export async function readJsonObject(ctx: Context, maxBytes: number): Promise<Record<string, unknown>> {
  const type = ctx.request.type;
  if (type !== "application/json") {
    throw errors.payload(`request body must be JSON (Content-Type: application/json), got "${type || "none"}"`, "Send Content-Type: application/json with a JSON object body.");
  }
  const tooLarge = () => {
    // Answer at once and close the connection rather than read the rest.
    ctx.set("Connection", "close");
    return errors.payload(`request body is larger than ${maxBytes} bytes`, `Send at most ${maxBytes} bytes (html at most 524,288 bytes, data at most 262,144 bytes as JSON).`);
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
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw errors.payload("request body is not valid JSON", "Send a well-formed JSON object.");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw errors.payload("request body must be a JSON object", "Send a JSON object such as {\"template_id\": \"invoice\", \"data\": {}}.");
  }
  return parsed as Record<string, unknown>;
}

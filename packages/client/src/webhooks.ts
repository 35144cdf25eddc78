import { createHmac, timingSafeEqual } from "node:crypto";
import { PressroomSignatureError } from "./errors";

/**
 * Webhook signatures (spec section 6):
 *
 *     X-Service-Signature: t=<unix-seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>
 *
 * This module is the single implementation of the scheme: the service signs
 * with `signWebhookPayload`, receivers check with `verifyWebhookSignature` or
 * `constructEvent`. It depends only on `node:crypto`.
 */

/** The header that carries the signature (HTTP header names are case-insensitive). */
export const SIGNATURE_HEADER = "X-Service-Signature";

/** Default replay window: |now - t| may be at most this many seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The raw request body exactly as received: bytes, or the undecoded-then-decoded text. */
export type RawBody = string | Uint8Array;

export interface VerifyOptions {
  /** Maximum allowed |now - t| in seconds; finite and >= 0. Default 300. */
  toleranceSeconds?: number;
  /** Clock in milliseconds since the epoch (for tests). Default `Date.now`. */
  now?: () => number;
}

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const UNSIGNED_INTEGER = /^[0-9]+$/;
/** Optional whitespace around list entries (RFC 9110 OWS), e.g. "t=1, v1=…". */
const OWS = /^[ \t]+|[ \t]+$/g;

interface ParsedSignature {
  /** The timestamp exactly as it appears in the header: it is part of the signed string. */
  timestamp: string;
  seconds: number;
  /** The decoded v1 signatures (32 bytes each). */
  v1: Buffer[];
}

/**
 * Parses `t=<int>,v1=<hex>[,v1=<hex>…][,<other scheme>=…]`. Returns undefined
 * for anything malformed: no or duplicate `t`, a non-integer `t`, no `v1`, a
 * `v1` that is not 64 hex digits, or an entry that is not `key=value`.
 * Entries of other schemes (v0, v2, …) are ignored whatever their value.
 */
function parseSignatureHeader(header: string): ParsedSignature | undefined {
  if (header.length === 0) return undefined;
  let timestamp: string | undefined;
  const v1: Buffer[] = [];
  for (const rawEntry of header.split(",")) {
    const entry = rawEntry.replace(OWS, "");
    const eq = entry.indexOf("=");
    if (eq <= 0) return undefined;
    const key = entry.slice(0, eq);
    const value = entry.slice(eq + 1);
    if (key === "t") {
      if (timestamp !== undefined) return undefined;
      timestamp = value;
    } else if (key === "v1") {
      if (!HEX_SHA256.test(value)) return undefined;
      v1.push(Buffer.from(value, "hex"));
    }
  }
  if (timestamp === undefined || !UNSIGNED_INTEGER.test(timestamp) || v1.length === 0) return undefined;
  const seconds = Number(timestamp);
  if (!Number.isSafeInteger(seconds)) return undefined;
  return { timestamp, seconds, v1 };
}

function isRawBody(value: unknown): value is RawBody {
  return typeof value === "string" || value instanceof Uint8Array;
}

/** HMAC-SHA256(secret, `${timestamp}.` + body bytes); a string body is UTF-8 encoded. */
function computeSignature(rawBody: RawBody, secret: string, timestamp: string): Buffer {
  return createHmac("sha256", secret).update(`${timestamp}.`, "utf8").update(rawBody).digest();
}

/**
 * Returns the `X-Service-Signature` header value for `rawBody` signed at
 * `timestampSeconds` (Unix seconds, a non-negative integer). Sign the exact
 * bytes that will be sent, and sign afresh at every delivery attempt.
 */
export function signWebhookPayload(rawBody: RawBody, secret: string, timestampSeconds: number): string {
  if (!isRawBody(rawBody)) throw new TypeError("rawBody must be a string or a Uint8Array");
  if (typeof secret !== "string" || secret.length === 0) throw new TypeError("secret must be a non-empty string");
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new TypeError("timestampSeconds must be a non-negative integer (Unix seconds)");
  }
  const timestamp = String(timestampSeconds);
  return `t=${timestamp},v1=${computeSignature(rawBody, secret, timestamp).toString("hex")}`;
}

/**
 * Checks a webhook delivery. True only when the header is well formed, its
 * `t` lies within `toleranceSeconds` of now (past or future), and at least
 * one `v1` equals HMAC-SHA256(secret, t + "." + rawBody), compared in
 * constant time. Never throws: anything wrong (including a body that is not
 * a string or bytes, an empty secret, or an invalid tolerance) gives false.
 *
 * Pass the body exactly as received, before any JSON parsing.
 */
export function verifyWebhookSignature(rawBody: RawBody, header: string | undefined | null, secret: string, options: VerifyOptions = {}): boolean {
  try {
    if (!isRawBody(rawBody) || typeof header !== "string" || typeof secret !== "string" || secret.length === 0) return false;
    const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    if (typeof tolerance !== "number" || !Number.isFinite(tolerance) || tolerance < 0) return false;

    const parsed = parseSignatureHeader(header);
    if (!parsed) return false;

    const nowMs = (options.now ?? Date.now)();
    if (typeof nowMs !== "number" || !Number.isFinite(nowMs)) return false;
    if (Math.abs(Math.floor(nowMs / 1000) - parsed.seconds) > tolerance) return false;

    const expected = computeSignature(rawBody, secret, parsed.timestamp);
    let matched = false;
    // Check every candidate (no early exit), each in constant time.
    for (const candidate of parsed.v1) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
    }
    return matched;
  } catch {
    return false;
  }
}

/** The JSON body of a webhook callback (DESIGN.md). */
export interface WebhookEvent {
  /** Event id: the same on every retry of one delivery, so use it to deduplicate. */
  id: string;
  type: "job.succeeded" | "job.failed";
  created_at: string;
  job_id: string;
  status: "succeeded" | "failed";
  /** Signed download URL when the job succeeded. Treat it like the document itself. */
  url?: string | null;
  expires_at?: string | null;
  error?: { code: string; message: string } | null;
}

/** A delivery's headers: a fetch `Headers`, or an object such as Node's `req.headers` (names in any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined | null>;

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof Headers !== "undefined" && headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() !== name.toLowerCase()) continue;
    if (typeof value === "string") return value;
    if (Array.isArray(value) && typeof value[0] === "string") return value[0];
  }
  return undefined;
}

const BASE64_SHA256 = /^[A-Za-z0-9+/]{43}=$/;

/**
 * Checks the Standard Webhooks signature: `webhook-signature` holds
 * space-separated `v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>`
 * where the key is the base64 after `whsec_` of the secret, decoded; the
 * timestamp must lie within the tolerance. Never throws.
 */
export function verifyStandardWebhook(rawBody: RawBody, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): boolean {
  try {
    if (!isRawBody(rawBody) || typeof secret !== "string" || !headers || typeof headers !== "object") return false;
    const id = headerOf(headers, "webhook-id");
    const timestamp = headerOf(headers, "webhook-timestamp");
    const signature = headerOf(headers, "webhook-signature");
    if (!id || !timestamp || !signature || !UNSIGNED_INTEGER.test(timestamp)) return false;
    const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    if (typeof tolerance !== "number" || !Number.isFinite(tolerance) || tolerance < 0) return false;
    const nowMs = (options.now ?? Date.now)();
    if (typeof nowMs !== "number" || !Number.isFinite(nowMs) || Math.abs(Math.floor(nowMs / 1000) - Number(timestamp)) > tolerance) return false;
    const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
    if (key.length === 0) return false;
    const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`, "utf8").update(rawBody).digest();
    let matched = false;
    for (const entry of signature.split(" ")) {
      const [version, value] = entry.split(",", 2);
      if (version !== "v1" || value === undefined || !BASE64_SHA256.test(value)) continue;
      if (timingSafeEqual(Buffer.from(value, "base64"), expected)) matched = true;
    }
    return matched;
  } catch {
    return false;
  }
}

/**
 * Verifies the delivery, then parses it: the only safe order. `headers` is
 * the X-Service-Signature value, or the delivery's headers (then either its
 * X-Service-Signature or its Standard Webhooks headers must verify). Throws
 * `PressroomSignatureError` when verification fails (answer 400/401 and
 * ignore the body). A verified body that is not UTF-8 JSON throws the
 * decoder's TypeError or JSON.parse's SyntaxError.
 */
export function constructEvent<T = WebhookEvent>(
  rawBody: RawBody,
  headers: string | WebhookHeaders | undefined | null,
  secret: string,
  options: VerifyOptions = {},
): T {
  const verified =
    typeof headers === "string" || headers === undefined || headers === null
      ? verifyWebhookSignature(rawBody, headers, secret, options)
      : verifyWebhookSignature(rawBody, headerOf(headers, SIGNATURE_HEADER), secret, options) || verifyStandardWebhook(rawBody, headers, secret, options);
  if (!verified) throw new PressroomSignatureError();
  const text = typeof rawBody === "string" ? rawBody : new TextDecoder("utf-8", { fatal: true }).decode(rawBody);
  return JSON.parse(text) as T;
}

import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/**
 * A small AWS Signature Version 4 verifier for presigned (query-string) S3
 * URLs, as an S3 endpoint checks them: the canonical request from the
 * received method, path, query (all but X-Amz-Signature) and the signed
 * headers with UNSIGNED-PAYLOAD, the string to sign over its scope, and the
 * HMAC chain of the secret key (docs.aws.amazon.com, "Authenticating
 * Requests: Using Query Parameters"). Written from the specification, so a
 * URL the AWS SDK's presigner made must pass it unchanged and fail it altered.
 */
export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** RFC 3986 encoding, as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
const encode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);

const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data, "utf8").digest();

/** Why the request's presigned signature does not hold, or undefined when it does. */
export function sigV4Problem(
  request: { method: string; path: string; headers: Record<string, string> },
  credentials: SigV4Credentials,
  now = Date.now(),
): string | undefined {
  const url = new URL(request.path, "https://receiver.invalid");
  const params = [...url.searchParams.entries()];
  const get = (name: string) => url.searchParams.get(name) ?? "";
  if (get("X-Amz-Algorithm") !== "AWS4-HMAC-SHA256") return "not a SigV4 presigned URL";
  const [accessKeyId, date, region, service, terminator] = get("X-Amz-Credential").split("/");
  if (accessKeyId !== credentials.accessKeyId || terminator !== "aws4_request" || !date || !region || !service) return "bad credential scope";
  const amzDate = get("X-Amz-Date");
  const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));
  if (!Number.isFinite(signedAt) || !amzDate.startsWith(date)) return "bad X-Amz-Date";
  if (now > signedAt + Number(get("X-Amz-Expires")) * 1000) return "expired";
  const signedHeaders = get("X-Amz-SignedHeaders").split(";");
  const canonicalHeaders = signedHeaders.map((name) => `${name}:${(request.headers[name] ?? "").trim().replace(/\s+/g, " ")}\n`).join("");
  const canonicalQuery = params
    .filter(([name]) => name !== "X-Amz-Signature")
    .map(([name, value]) => [encode(name), encode(value)] as const)
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
  const canonicalRequest = [request.method, url.pathname, canonicalQuery, canonicalHeaders, signedHeaders.join(";"), "UNSIGNED-PAYLOAD"].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, createHash("sha256").update(canonicalRequest, "utf8").digest("hex")].join("\n");
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, date), region), service), "aws4_request");
  const expected = Buffer.from(createHmac("sha256", signingKey).update(stringToSign, "utf8").digest("hex"));
  const given = Buffer.from(get("X-Amz-Signature"));
  return given.length === expected.length && timingSafeEqual(given, expected) ? undefined : "signature mismatch";
}

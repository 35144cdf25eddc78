import { ERROR_CODES, z, type ErrorCode } from "@pressroom/platform";
import { TEMPLATE_ID_PATTERN } from "@pressroom/domain";
import type { ZodOpenApiContentObject, ZodOpenApiResponseObject } from "zod-openapi";

/**
 * The zod schemas more than one feature's routes use: the error body, the
 * template id, the response headers (each a component of the OpenAPI
 * document, openapi.ts) and the error responses most operations answer.
 */

export const ErrorBody = z
  .strictObject({
    error: z.string().min(1).meta({ description: "A message for people; it names the failing field where there is one." }),
    code: z
      .enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]])
      .meta({ description: "Machine-readable; clients branch on this, never on the message." }),
    hint: z.string().min(1).meta({ description: "What to do about it." }),
  })
  .meta({ id: "Error", description: "The body of every error response: exactly these three fields." });

const mustMatch = `must match ${TEMPLATE_ID_PATTERN.source}`;
export const TemplateId = z
  .string({ error: (issue) => (issue.input === undefined ? "required" : mustMatch) })
  .regex(TEMPLATE_ID_PATTERN, mustMatch)
  .meta({ id: "TemplateId", examples: ["invoice"] });

export const JobId = z
  .string()
  .regex(/^job_[0-9a-z]{26}$/)
  .meta({ id: "JobId" });

/** A page of a list: the cursor of the next page, or null on the last. */
export const NextCursor = z.string().nullable().meta({ description: "Send it back as cursor for the next page; null on the last page." });

/** The paging parameters of the lists (GET /v1/jobs, GET /v1/webhooks/deliveries). */
export const PAGE_PARAMS = {
  limit: z.coerce
    .number({ error: "must be an integer from 1 to 100" })
    .int("must be an integer from 1 to 100")
    .min(1, "must be an integer from 1 to 100")
    .max(100, "must be an integer from 1 to 100")
    .optional()
    .meta({ description: "At most this many (1 to 100, default 20)." }),
  cursor: z.string().max(200, "must be a cursor this list answered").optional().meta({ description: "next_cursor of the previous page." }),
};

/** An RFC 3339 date-time, as the services write it (documented; the gateway writes these, it does not read them). */
export const dateTime = () => z.string().meta({ format: "date-time" });

const nonNegative = z.int().min(0).max(Number.MAX_SAFE_INTEGER);
const header = (id: string, description: string, schema: z.ZodType) => schema.meta({ header: { id }, description });

export const headers = {
  requestId: header(
    "Request-Id",
    "The trace id of the request (a random id of the same form where the request is not traced).",
    z.string().regex(/^[0-9a-f]{32}$/),
  ),
  rateLimitLimit: header("RateLimit-Limit", "Requests allowed in any 60-second window by the key's plan.", nonNegative),
  rateLimitRemaining: header("RateLimit-Remaining", "Requests left in the current window.", nonNegative),
  rateLimitReset: header("RateLimit-Reset", "Seconds until the oldest counted request leaves the window.", nonNegative),
  retryAfter: header("Retry-After", "Seconds to wait before retrying.", z.int().min(1).max(Number.MAX_SAFE_INTEGER)),
  location: header("Location", "The job's status resource, /v1/jobs/<id>.", z.string().regex(/^\/v1\/jobs\/job_[0-9a-z]{26}$/)),
  wwwAuthenticate: header("WWW-Authenticate", "The authentication scheme: Bearer.", z.string().regex(/^Bearer /)),
  etag: header("ETag", "Changes when the template changes.", z.string()),
  cacheControl: header("Cache-Control", "Caching policy.", z.string()),
  contentLength: header("Content-Length", "Size of the file in bytes.", nonNegative),
  contentRange: header("Content-Range", "The range answered and the output's size: bytes <first>-<last>/<size>.", z.string().regex(/^bytes \d+-\d+\/\d+$/)),
  acceptRanges: header("Accept-Ranges", "bytes: a download answers a Range header.", z.literal("bytes")),
  contentDisposition: header(
    "Content-Disposition",
    "inline, with a file name such as invoice-job_….pdf; attachment, with the request's options.filename, when it gave one (and filename*= in UTF-8); " +
      "the request's options.disposition, when it gave one, decides between them.",
    z.string().regex(/^(inline|attachment); filename="[^"]+"/),
  ),
  referrerPolicy: header("Referrer-Policy", "no-referrer: the signed URL never leaks through a Referer header.", z.literal("no-referrer")),
  allow: header("Allow", "The methods the path supports.", z.string()),
  idempotentReplayed: header(
    "Idempotent-Replayed",
    "true when this is the recorded response of an earlier request with the same Idempotency-Key (absent otherwise).",
    z.literal("true").optional(),
  ),
};

/** The rate-limit headers every keyed response carries once the key is known. */
export const RATE_HEADERS = {
  "RateLimit-Limit": headers.rateLimitLimit,
  "RateLimit-Remaining": headers.rateLimitRemaining,
  "RateLimit-Reset": headers.rateLimitReset,
};

/** On the operations that take an Idempotency-Key: the headers of a response that may be a replay. */
export const REPLAYABLE_HEADERS = { ...RATE_HEADERS, "Idempotent-Replayed": headers.idempotentReplayed };

type Headers = Record<string, z.ZodType>;

/** A JSON response with Request-Id and `more` headers; `otherContent`, other media types it may be answered in. */
export function jsonResponse(description: string, schema: z.ZodType, more: Headers = {}, otherContent: ZodOpenApiContentObject = {}): ZodOpenApiResponseObject {
  return { description, headers: z.object({ "Request-Id": headers.requestId, ...more }), content: { "application/json": { schema }, ...otherContent } };
}

/** An error response: the error body, its code narrowed to `codes`. */
export function errorResponse(description: string, codes: readonly ErrorCode[], more: Headers = {}): ZodOpenApiResponseObject {
  return jsonResponse(description, z.intersection(ErrorBody, z.looseObject({ code: z.enum(codes as [ErrorCode, ...ErrorCode[]]) })), more);
}

export const unauthorized = errorResponse("The API key is missing, malformed, unknown or revoked.", ["AUTH_INVALID"], {
  "WWW-Authenticate": headers.wwwAuthenticate,
});
export const internal = errorResponse("A server-side failure (including a dependency that is briefly unavailable); safe to retry with backoff.", [
  "INTERNAL_ERROR",
]);
export const rateLimited = errorResponse("More than the plan's requests per minute.", ["RATE_LIMITED"], { ...RATE_HEADERS, "Retry-After": headers.retryAfter });

/** The errors of a keyed operation that takes no body. */
export const keyedErrors = { "401": unauthorized, "429": rateLimited, "500": internal };

/** The errors of a list (GET /v1/jobs, /v1/webhooks/deliveries): the keyed ones and a parameter refused. */
export const listErrors = {
  "401": unauthorized,
  "422": errorResponse("A parameter is not valid (the message names it).", ["PAYLOAD_INVALID"], RATE_HEADERS),
  "429": rateLimited,
  "500": internal,
};

/** A keyed operation's security: a bearer key, or the console's session cookie. */
export const KEYED: Record<string, string[]>[] = [{ bearerAuth: [] }, { cookieAuth: [] }];

const SESSION_REFUSALS = ["CSRF_REJECTED", "DEMO_KEY_READ_ONLY"] as const satisfies ErrorCode[];

/**
 * The 403 of an operation that changes something: a console session's request refused (and
 * `codes`, the operation's own refusals, described first in `description`). A session's refusal
 * comes before the request is counted, so the rate headers are there only for the operation's own.
 */
export function forbidden(description = "", codes: readonly ErrorCode[] = []): ZodOpenApiResponseObject {
  const rate = Object.fromEntries(
    Object.entries(RATE_HEADERS).map(([name, schema]) => [
      name,
      schema.optional().meta({ description: `${schema.description} Absent on a session's refusal.` }),
    ]),
  );
  return errorResponse(
    `${description}CSRF_REJECTED: a request with the console's session cookie that comes from another origin or lacks the session's X-CSRF-Token. ` +
      "DEMO_KEY_READ_ONLY: the public demo key's console session, which changes nothing.",
    [...codes, ...SESSION_REFUSALS],
    rate,
  );
}

export const IdempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/)
  .optional()
  .meta({
    param: { id: "IdempotencyKey", in: "header", name: "Idempotency-Key" },
    description:
      "Makes a retry safe: a unique value per operation (e.g. a UUID), sent again unchanged with every retry of it. Scoped to the API key, kept 24 h.",
  });

export const IDEMPOTENCY_DESCRIPTION =
  " **Idempotency-Key** (optional header, 1–255 visible ASCII characters, scoped to the API key, kept 24 h, exact across servers): " +
  "the same key with the same body again answers the first response (status and body, the same job id) with `Idempotent-Replayed: true`, " +
  "counted once against the quota; a duplicate while the first request is still running waits for it (sync) or gets the same 202 (async). " +
  "The same key with another body is 422 IDEMPOTENCY_KEY_REUSED. " +
  "A first request refused before it was admitted (401, 404, 422 PAYLOAD_INVALID, 429) or answered 5xx leaves the key unused, so retry it with the same key.";

export const PreferWait = z
  .string()
  .regex(/^\s*wait\s*=\s*\d+/i)
  .optional()
  .meta({
    param: { id: "PreferWait", in: "header", name: "Prefer" },
    description:
      "wait=N (RFC 7240, N seconds, at most 60): a request that meets the key's concurrency limit waits up to N s for a slot of its own " +
      "before it is answered 429 CONCURRENCY_EXCEEDED. Without it, that answer comes at once.",
    examples: ["wait=30"],
  });

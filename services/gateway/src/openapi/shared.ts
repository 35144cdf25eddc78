/**
 * What the features' OpenAPI fragments share: references into the
 * document's components (document.ts), the headers keyed and replayable
 * responses carry, and the error responses most operations answer.
 */

export const ERROR_CODES = [
  "AUTH_INVALID",
  "PAYLOAD_INVALID",
  "TEMPLATE_NOT_FOUND",
  "RATE_LIMITED",
  "QUOTA_EXCEEDED",
  "CONCURRENCY_EXCEEDED",
  "SIGNUP_THROTTLED",
  "AUTH_EMAIL_EXISTS",
  "RENDER_FAILED",
  "NOT_FOUND",
  "METHOD_NOT_ALLOWED",
  "URL_INVALID",
  "DEMO_KEY_READ_ONLY",
  "URL_EXPIRED",
  "PLAN_INVALID",
  "IDEMPOTENCY_KEY_REUSED",
  "INTERNAL_ERROR",
  "UNAVAILABLE",
] as const;

type ErrorCode = (typeof ERROR_CODES)[number];

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The rate-limit headers every keyed response carries once the key is known. */
export const RATE_HEADERS = {
  "RateLimit-Limit": { $ref: "#/components/headers/RateLimit-Limit" },
  "RateLimit-Remaining": { $ref: "#/components/headers/RateLimit-Remaining" },
  "RateLimit-Reset": { $ref: "#/components/headers/RateLimit-Reset" },
};

export const COMMON_HEADERS = { "Request-Id": header("Request-Id") };

/** On the operations that take an Idempotency-Key: the headers of a response that may be a replay. */
export const REPLAYABLE_HEADERS = { ...RATE_HEADERS, "Idempotent-Replayed": header("Idempotent-Replayed") };

export const IDEMPOTENCY_DESCRIPTION =
  " **Idempotency-Key** (optional header, 1–255 visible ASCII characters, scoped to the API key, kept 24 h, exact across servers): " +
  "the same key with the same body again answers the first response (status and body, the same job id) with `Idempotent-Replayed: true`, " +
  "counted once against the quota; a duplicate while the first request is still running waits for it (sync) or gets the same 202 (async). " +
  "The same key with another body is 422 IDEMPOTENCY_KEY_REUSED. " +
  "A first request refused before it was admitted (401, 404, 422 PAYLOAD_INVALID, 429) or answered 5xx leaves the key unused, so retry it with the same key.";

export function errorResponse(description: string, codes: readonly ErrorCode[], headers: Record<string, unknown> = {}) {
  return {
    description,
    headers: { ...COMMON_HEADERS, ...headers },
    content: {
      "application/json": {
        schema: { allOf: [ref("Error"), { type: "object", properties: { code: { enum: [...codes] } } }] },
      },
    },
  };
}

export function jsonResponse(description: string, schema: unknown, headers: Record<string, unknown> = {}) {
  return { description, headers: { ...COMMON_HEADERS, ...headers }, content: { "application/json": { schema } } };
}

export const unauthorized = errorResponse("The API key is missing, malformed, unknown or revoked.", ["AUTH_INVALID"], {
  "WWW-Authenticate": header("WWW-Authenticate"),
});
export const internal = errorResponse("A server-side failure (including a dependency that is briefly unavailable); safe to retry with backoff.", [
  "INTERNAL_ERROR",
]);
export const rateLimited = errorResponse("More than the plan's requests per minute.", ["RATE_LIMITED"], {
  ...RATE_HEADERS,
  "Retry-After": header("Retry-After"),
});

/** The errors of a keyed operation that takes no body. */
export const keyedErrors = {
  "401": unauthorized,
  "429": rateLimited,
  "500": internal,
};

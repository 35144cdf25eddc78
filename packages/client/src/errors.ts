/**
 * The API's machine-readable error codes (spec section 7 plus the codes that
 * DESIGN.md adds). Clients branch on `code`, never on the message. The union
 * stays open (`string & {}`) so a code added by a newer server still types.
 */
export type PressroomErrorCode =
  | "AUTH_INVALID"
  | "PAYLOAD_INVALID"
  | "TEMPLATE_NOT_FOUND"
  | "TEMPLATE_VERSION_NOT_FOUND"
  | "TEMPLATE_EXISTS"
  | "TEMPLATE_LIMIT_REACHED"
  | "TEMPLATE_READ_ONLY"
  | "RATE_LIMITED"
  | "QUOTA_EXCEEDED"
  | "CONCURRENCY_EXCEEDED"
  | "SIGNUP_THROTTLED"
  | "AUTH_EMAIL_EXISTS"
  | "RENDER_FAILED"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "URL_INVALID"
  | "DEMO_KEY_READ_ONLY"
  | "CSRF_REJECTED"
  | "URL_EXPIRED"
  | "RANGE_NOT_SATISFIABLE"
  | "PLAN_INVALID"
  | "IDEMPOTENCY_KEY_REUSED"
  | "INTERNAL_ERROR"
  | "DESTINATION_FAILED"
  | "UNAVAILABLE"
  /** Client-side only: the request never got an HTTP response (network failure). */
  | "CONNECTION_ERROR"
  /** Client-side only: the request exceeded `timeoutMs`. */
  | "TIMEOUT"
  | (string & {});

export interface PressroomErrorInit {
  code: PressroomErrorCode;
  status: number;
  message: string;
  hint?: string;
  retryAfter?: number;
  cause?: unknown;
}

/**
 * A non-2xx answer of the Pressroom API: `code`, `message` and `hint` come
 * from the `{"error","code","hint"}` body, `status` is the HTTP status and
 * `retryAfter` the Retry-After header in seconds (set on every 429).
 * Network failures and timeouts use status 0 with code CONNECTION_ERROR or
 * TIMEOUT.
 */
export class PressroomError extends Error {
  readonly code: PressroomErrorCode;
  readonly status: number;
  readonly hint: string;
  readonly retryAfter?: number;

  constructor(init: PressroomErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "PressroomError";
    this.code = init.code;
    this.status = init.status;
    this.hint = init.hint ?? "";
    if (init.retryAfter !== undefined) this.retryAfter = init.retryAfter;
  }
}

/**
 * Thrown by `constructEvent` when a webhook's signature header is missing,
 * malformed, outside the tolerance, or does not match the body. Answer the
 * delivery with 400 (or 401) and do not act on the body.
 */
export class PressroomSignatureError extends Error {
  readonly code = "SIGNATURE_INVALID" as const;

  constructor(message = "webhook signature verification failed") {
    super(message);
    this.name = "PressroomSignatureError";
  }
}

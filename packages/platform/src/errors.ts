import { Metadata, status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";

/**
 * The closed set of error codes. Each maps to one HTTP status at the edge and
 * one gRPC status between services.
 */
export const ERROR_CODES = {
  AUTH_INVALID: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED },
  PAYLOAD_INVALID: { http: 422, grpc: GrpcStatus.INVALID_ARGUMENT },
  TEMPLATE_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  TEMPLATE_VERSION_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  TEMPLATE_EXISTS: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS },
  TEMPLATE_LIMIT_REACHED: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  TEMPLATE_READ_ONLY: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  RATE_LIMITED: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  QUOTA_EXCEEDED: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  CONCURRENCY_EXCEEDED: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  SIGNUP_THROTTLED: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  AUTH_EMAIL_EXISTS: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS },
  RENDER_FAILED: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION },
  NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  METHOD_NOT_ALLOWED: { http: 405, grpc: GrpcStatus.UNIMPLEMENTED },
  URL_INVALID: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  DEMO_KEY_READ_ONLY: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  CSRF_REJECTED: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  URL_EXPIRED: { http: 410, grpc: GrpcStatus.NOT_FOUND },
  RANGE_NOT_SATISFIABLE: { http: 416, grpc: GrpcStatus.OUT_OF_RANGE },
  PLAN_INVALID: { http: 422, grpc: GrpcStatus.INVALID_ARGUMENT },
  IDEMPOTENCY_KEY_REUSED: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION },
  INTERNAL_ERROR: { http: 500, grpc: GrpcStatus.INTERNAL },
  DESTINATION_FAILED: { http: 502, grpc: GrpcStatus.FAILED_PRECONDITION },
  UNAVAILABLE: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The exact error body of the public interface: three fields, no more. */
export function errorBody(err: AppError): { error: string; code: ErrorCode; hint: string } {
  return { error: err.message, code: err.code, hint: err.hint };
}

/** What a readiness probe answers while the process must not get traffic. */
export function notReady(): AppError {
  return new AppError(
    "UNAVAILABLE",
    "not ready: starting, shutting down, or a dependency is unreachable",
    "Send traffic to another instance, or retry in a few seconds.",
  );
}

const CODE_METADATA_KEY = "pressroom-code";
const HINT_METADATA_KEY = "pressroom-hint";
const RETRY_AFTER_METADATA_KEY = "pressroom-retry-after";

/** The one error type of Pressroom: a code from the closed set, a message and a hint. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly hint: string,
    readonly details: { retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = "AppError";
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].http;
  }

  /** The gRPC form: status plus the exact code and hint in trailing metadata. */
  toGrpc(): Partial<ServiceError> {
    const metadata = new Metadata();
    metadata.set(CODE_METADATA_KEY, this.code);
    metadata.set(HINT_METADATA_KEY, this.hint);
    if (this.details.retryAfterSeconds !== undefined) metadata.set(RETRY_AFTER_METADATA_KEY, String(this.details.retryAfterSeconds));
    return { code: ERROR_CODES[this.code].grpc, details: this.message, metadata };
  }
}

function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CODES, value);
}

/**
 * Turns an error from a gRPC call back into an AppError. Errors that carry no
 * Pressroom code (transport failures, deadlines, a caller refused) become
 * INTERNAL_ERROR or UNAVAILABLE, with the gRPC error as their cause (for an
 * operator's tool to show; never part of an answer).
 */
export function fromGrpcError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const serviceError = err as Partial<ServiceError>;
  const code = serviceError.metadata?.get(CODE_METADATA_KEY)[0];
  const hint = serviceError.metadata?.get(HINT_METADATA_KEY)[0];
  if (isErrorCode(code)) {
    const retryAfter = Number(serviceError.metadata?.get(RETRY_AFTER_METADATA_KEY)[0]);
    return new AppError(
      code,
      serviceError.details ?? "error",
      typeof hint === "string" ? hint : "",
      Number.isFinite(retryAfter) && retryAfter >= 0 ? { retryAfterSeconds: retryAfter } : {},
    );
  }
  const appError =
    serviceError.code === GrpcStatus.UNAVAILABLE || serviceError.code === GrpcStatus.DEADLINE_EXCEEDED
      ? new AppError("UNAVAILABLE", "a dependency is unavailable", "Retry with exponential backoff.")
      : new AppError("INTERNAL_ERROR", "internal error", "Retry with exponential backoff; contact support if it persists.");
  return Object.assign(appError, { cause: err });
}

/** Maps any thrown value to a gRPC error for a handler's callback. */
export function toGrpcError(err: unknown): Partial<ServiceError> {
  if (err instanceof AppError) return err.toGrpc();
  return new AppError("INTERNAL_ERROR", "internal error", "Retry with exponential backoff.").toGrpc();
}

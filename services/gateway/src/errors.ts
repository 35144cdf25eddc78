import { AppError, errorBody, type Logger } from "@pressroom/platform";
import type { Socket } from "node:net";
import type { Context, Next } from "koa";

export const errors = {
  notFound: () => new AppError("NOT_FOUND", "no such route", "Check the method and path against GET /v1/openapi.json."),
  methodNotAllowed: (allowed: string) => new AppError("METHOD_NOT_ALLOWED", "method not allowed on this route", `Use ${allowed} (see the Allow header).`),
  payload: (message: string, hint = "Fix the request body; see GET /v1/openapi.json for the schema.") => new AppError("PAYLOAD_INVALID", message, hint),
  internal: () => new AppError("INTERNAL_ERROR", "internal error", "Retry with exponential backoff; contact support if it persists."),
  unavailable: () => new AppError("INTERNAL_ERROR", "a part of the service is temporarily unavailable", "Retry with exponential backoff."),
};

/**
 * Maps any failure to an error of the public table. Framework errors keep
 * their meaning (400 → PAYLOAD_INVALID, 404, 405); a dependency that is
 * unavailable is a server-side failure, which the spec answers with 500
 * INTERNAL_ERROR; anything else unknown is logged and answered as 500.
 */
export function toAppError(err: unknown, logger: Logger, ctx: Context): AppError {
  if (err instanceof AppError) return err.code === "UNAVAILABLE" ? errors.unavailable() : err;
  const status = (err as { status?: number; statusCode?: number }).status ?? (err as { statusCode?: number }).statusCode;
  if (status === 404) return errors.notFound();
  if (status === 405) return errors.methodNotAllowed("a method this route supports");
  if (typeof status === "number" && status >= 400 && status < 500)
    return errors.payload("malformed request", "Check the URL encoding, the headers and the request body.");
  logger.error({ err, method: ctx.method, path: ctx.path }, "unhandled error");
  return errors.internal();
}

/**
 * Turns every failure below it into the three-field JSON error, with
 * Retry-After on 429s. Unknown errors are logged and answered as 500.
 * Headers set before the failure (Request-Id, RateLimit-*, Allow) stay.
 */
export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) throw errors.notFound();
    } catch (err) {
      const final = toAppError(err, logger, ctx);
      ctx.status = final.httpStatus;
      ctx.body = errorBody(final);
      ctx.remove("Content-Disposition");
      ctx.remove("ETag");
      ctx.set("Cache-Control", "no-store");
      if (final.httpStatus === 429) ctx.set("Retry-After", String(Math.max(1, Math.ceil(final.details.retryAfterSeconds ?? 1))));
      if (final.httpStatus === 401) ctx.set("WWW-Authenticate", 'Bearer realm="pressroom"');
    }
  };
}

/**
 * After the router: a path that exists but not for this method is 405 with
 * Allow (any method, including ones the router does not know); OPTIONS on an
 * existing path answers 204 with Allow.
 */
export function allowedMethods() {
  return async (ctx: Context, next: Next): Promise<void> => {
    await next();
    if (ctx.status !== 404 || ctx.body != null) return;
    const matched = (ctx as Context & { matched?: { methods: string[] }[] }).matched ?? [];
    const allowed = [...new Set(matched.flatMap((layer) => layer.methods))];
    if (allowed.length === 0) return;
    if (!allowed.includes("OPTIONS")) allowed.push("OPTIONS");
    ctx.set("Allow", allowed.join(", "));
    if (ctx.method === "OPTIONS") {
      ctx.status = 204;
      return;
    }
    throw errors.methodNotAllowed(allowed.filter((method) => method !== "OPTIONS" && method !== "HEAD").join(" or "));
  };
}

/**
 * Requests Node's HTTP parser rejects before koa sees them (a malformed
 * request line or header, headers too large, a request not received in time)
 * get the same three-field JSON error instead of Node's empty 400.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const reason =
    err.code === "HPE_HEADER_OVERFLOW"
      ? "request headers are too large"
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? "the request was not received completely in time"
        : "malformed HTTP request";
  const body = JSON.stringify(errorBody(errors.payload(reason, "Send a well-formed HTTP/1.1 request; see GET /v1/openapi.json.")));
  socket.end(
    `HTTP/1.1 422 Unprocessable Entity\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

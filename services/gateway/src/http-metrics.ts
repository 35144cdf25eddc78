import { bytesHistogram, recordSince, secondsHistogram, statusClass } from "@pressroom/platform";
import type { Context, Next } from "koa";

const duration = secondsHistogram("http.server.request.duration", "HTTP requests answered, by route template, method and status class.");
const requestSize = bytesHistogram("http.server.request.body.size", "Request bodies, by route template and method.");
const responseSize = bytesHistogram("http.server.response.body.size", "Response bodies, by route template, method and status class.");

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * Outermost middleware: times every request until its response is sent (or
 * the client went away). The route is koa-router's template (`/v1/jobs/:id`),
 * never the path itself, so no job or output id becomes a label; an unknown
 * path is "unmatched".
 */
export function httpMetrics() {
  return async (ctx: Context, next: Next): Promise<void> => {
    const startedAt = performance.now();
    const method = KNOWN_METHODS.has(ctx.method) ? ctx.method : "_OTHER";
    ctx.res.once("close", () => {
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const attributes = { "http.route": typeof route === "string" ? route : "unmatched", "http.request.method": method };
      const status = { ...attributes, "http.response.status_class": statusClass(ctx.status) };
      recordSince(duration, startedAt, status);
      const received = Number(ctx.get("content-length"));
      if (received > 0) requestSize.record(received, attributes);
      const sent = Number(ctx.res.getHeader("content-length"));
      if (Number.isFinite(sent)) responseSize.record(sent, status);
    });
    await next();
  };
}

import { timingSafeEqual } from "node:crypto";
import { AppError } from "@pressroom/platform";
import type { Context } from "koa";
import type { TrustedProxies } from "../client-ip";

/**
 * The console's session, as the HTTP edge sees it: the cookie that carries its token (HttpOnly,
 * so page scripts never read it; SameSite=Strict; Secure behind TLS), and the cross-site request
 * forgery check that every cookie-authenticated request that changes anything passes. The
 * session itself (its key, CSRF token, end) is identity's.
 */

export const SESSION_COOKIE = "pressroom_session";
/** The header a cookie-authenticated change carries the session's CSRF token in. */
export const CSRF_HEADER = "X-CSRF-Token";

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The session token of the request's cookie, if it carries one. */
export function sessionToken(ctx: Context): string | undefined {
  for (const part of (ctx.get("cookie") || "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === SESSION_COOKIE) {
      const token = value.join("=");
      return TOKEN.test(token) ? token : undefined;
    }
  }
  return undefined;
}

/** Whether the request reached us over TLS: its own socket, or a trusted proxy that says so. */
function overTls(ctx: Context, trusted: TrustedProxies): boolean {
  if ((ctx.req.socket as { encrypted?: boolean }).encrypted) return true;
  const peer = (ctx.req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
  return trusted.has(peer) && ctx.get("x-forwarded-proto").split(",")[0]?.trim().toLowerCase() === "https";
}

/** Sets the session cookie (or, with maxAgeSeconds 0, clears it). */
export function setSessionCookie(ctx: Context, trusted: TrustedProxies, token: string, maxAgeSeconds: number): void {
  const attributes = [`${SESSION_COOKIE}=${token}`, "Path=/", "HttpOnly", "SameSite=Strict", `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`];
  if (overTls(ctx, trusted)) attributes.push("Secure");
  ctx.set("Set-Cookie", attributes.join("; "));
}

export const csrfRejected = (why: string) =>
  new AppError(
    "CSRF_REJECTED",
    `cross-site request refused: ${why}`,
    `A request with the session cookie that changes anything must come from the console's own pages and carry ${CSRF_HEADER} (GET /console/session answers it); API clients send Authorization: Bearer <API_KEY> instead.`,
  );

const equal = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * Refuses a request that comes from another origin: its Origin names another host, or its
 * Sec-Fetch-Site (where the browser sends one) is not same-origin. Requests without either (API
 * clients, curl) pass: they carry no browser's cookies but the ones they were given.
 */
export function checkOrigin(ctx: Context): void {
  const origin = ctx.get("origin");
  if (origin) {
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {
      host = undefined;
    }
    if (host !== ctx.host) throw csrfRejected("the request comes from another origin");
  }
  const site = ctx.get("sec-fetch-site");
  if (site && site !== "same-origin" && site !== "none") throw csrfRejected("the request comes from another origin");
}

/**
 * Refuses a cookie-authenticated request that changes anything unless it comes from this origin
 * (checkOrigin) and carries the session's CSRF token. SameSite=Strict already keeps the cookie
 * off requests from other sites; this also covers other origins of the same site (another port,
 * another subdomain).
 */
export function checkCsrf(ctx: Context, csrfToken: string): void {
  if (SAFE_METHODS.has(ctx.method)) return;
  checkOrigin(ctx);
  const sent = ctx.get(CSRF_HEADER);
  if (!sent) throw csrfRejected(`no ${CSRF_HEADER} header`);
  if (!equal(sent, csrfToken)) throw csrfRejected(`${CSRF_HEADER} is not this session's`);
}

/** Whether the request changes anything (a read-only session may not). */
export const changes = (ctx: Context): boolean => !SAFE_METHODS.has(ctx.method);

import { createHash } from "node:crypto";
import { identityV1 } from "@pressroom/contracts";
import { AppError, call } from "@pressroom/platform";
import type { Context } from "koa";
import { changes, checkCsrf, sessionToken } from "./session";

/** A console session the request came with (instead of a bearer key): what the gateway checks its requests against. */
export interface ConsoleSession {
  token: string;
  keyPrefix: string;
  csrfToken: string;
  expiresAt: string;
  /** The public demo key's session: it may read, never change anything. */
  readOnly: boolean;
}

export interface Principal {
  keyId: string;
  plan: string;
  /** Set when the request was authenticated by the console's session cookie. */
  session?: ConsoleSession;
}

const invalid = (why: string) =>
  new AppError("AUTH_INVALID", `API key ${why}`, "Send Authorization: Bearer <API_KEY> with a valid key; get one with POST /v1/signup.");

/** The API key of a request's `Authorization: Bearer <key>` header; 401 when it is missing or malformed. */
export function bearerKey(ctx: Context): string {
  const header = ctx.get("authorization");
  if (!header) throw invalid("missing");
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
  if (!match) throw invalid("malformed");
  return match[1]!;
}

/** The console session token a request is authenticated by: its cookie's, unless it has an Authorization header (which wins). */
function sessionOf(ctx: Context): string | undefined {
  return ctx.get("authorization") ? undefined : sessionToken(ctx);
}

/** Whether the request names a key at all (a bearer key or a session cookie): the catalog's routes answer the public catalog without. */
export function hasCredentials(ctx: Context): boolean {
  return Boolean(ctx.get("authorization") || sessionToken(ctx));
}

/** How identity is shown the key of a request it reads a secret for: the API key itself, or the console session of it. */
export function holder(ctx: Context): { apiKey: string; sessionToken: string } {
  const token = sessionOf(ctx);
  return token ? { apiKey: "", sessionToken: token } : { apiKey: bearerKey(ctx), sessionToken: "" };
}

export function readOnlySession(): AppError {
  return new AppError(
    "DEMO_KEY_READ_ONLY",
    "the public demo key's console session is read-only",
    "Everyone holds the demo key: its console shows, and changes nothing. Sign up (POST /v1/signup) for a key of your own.",
  );
}

/**
 * Authenticates requests through the identity service: a Bearer key, or the
 * console's session cookie. Key successes are cached for a short time (keyed
 * by the key's hash, never the key), so a revocation takes effect everywhere
 * within that time; sessions are checked at every request, so a sign-out or
 * a revocation ends them at once. A session's request that changes anything
 * must pass the CSRF check (session.ts), and the demo key's session changes nothing.
 */
export class Authenticator {
  private readonly cache = new Map<string, { principal: Principal; until: number }>();

  constructor(
    private readonly identity: identityV1.IdentityServiceClient,
    private readonly cacheMs: number,
  ) {}

  async authenticate(ctx: Context): Promise<Principal> {
    const token = sessionOf(ctx);
    if (token) return this.session(ctx, token);
    const apiKey = bearerKey(ctx);
    const cacheKey = createHash("sha256").update(apiKey).digest("base64");
    const now = Date.now();
    const cached = this.cache.get(cacheKey);
    if (cached && cached.until > now) return cached.principal;
    let response: identityV1.AuthenticateResponse;
    try {
      response = await call(this.identity, this.identity.authenticate, { apiKey });
    } catch (err) {
      this.cache.delete(cacheKey);
      if (err instanceof AppError && err.code === "AUTH_INVALID") throw invalid("malformed, unknown or revoked");
      throw err;
    }
    const principal = { keyId: response.key!.keyId, plan: response.key!.plan };
    if (this.cacheMs > 0) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(cacheKey, { principal, until: now + this.cacheMs });
    }
    return principal;
  }

  /** The principal of a live console session; 401 when it is not (expired, signed out, its key revoked). */
  async sessionPrincipal(token: string): Promise<Principal> {
    const { session } = await call(this.identity, this.identity.authenticateSession, { sessionToken: token });
    const { key, keyPrefix, csrfToken, expiresAt, readOnly } = session!;
    return { keyId: key!.keyId, plan: key!.plan, session: { token, keyPrefix, csrfToken, expiresAt, readOnly } };
  }

  private async session(ctx: Context, token: string): Promise<Principal> {
    const principal = await this.sessionPrincipal(token);
    checkCsrf(ctx, principal.session!.csrfToken);
    if (principal.session!.readOnly && changes(ctx)) throw readOnlySession();
    return principal;
  }
}

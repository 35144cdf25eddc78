import type { identityV1 } from "@pressroom/contracts";
import { AppError, call, type z } from "@pressroom/platform";
import type { Context } from "koa";
import type { Authenticator } from "../access/auth";
import { checkCsrf, checkOrigin, sessionToken, setSessionCookie } from "../access/session";
import { bodyProblem, readJsonObject } from "../body";
import type { TrustedProxies } from "../client-ip";
import { SESSION_HINTS, SessionRequest, type Session } from "./api";

/** What the session routes use: identity, which keeps sessions, the authenticator that checks them, and who may say a request came over TLS. */
export interface SessionDeps {
  identity: identityV1.IdentityServiceClient;
  auth: Authenticator;
  trustedProxies: TrustedProxies;
}

const signedOut = () => new AppError("AUTH_INVALID", "not signed in", "Sign in at /console (POST /console/session with your API key).");

/** POST, GET and DELETE /console/session: the console's sign-in, who is signed in, sign-out. */
export function sessionRoutes(deps: SessionDeps) {
  const { identity, auth, trustedProxies } = deps;
  return {
    /** POST /console/session {"api_key"}: 204 and the cookie. */
    async signIn(ctx: Context) {
      checkOrigin(ctx);
      const body = await readJsonObject(ctx, 4 * 1024);
      const parsed = SessionRequest.safeParse(body);
      if (!parsed.success) throw bodyProblem(SessionRequest, body, parsed.error, SESSION_HINTS);
      const created = await call(identity, identity.createSession, { apiKey: parsed.data.api_key }).catch((err: unknown) => {
        if (err instanceof AppError && err.code === "AUTH_INVALID") {
          throw new AppError("AUTH_INVALID", "API key unknown or revoked", "Sign in with a key of yours; get one with POST /v1/signup.");
        }
        throw err;
      });
      const seconds = (Date.parse(created.session!.expiresAt) - Date.now()) / 1_000;
      setSessionCookie(ctx, trustedProxies, created.sessionToken, seconds);
      ctx.set("Cache-Control", "no-store");
      ctx.status = 204;
    },

    /** GET /console/session: the session's key prefix, plan and CSRF token. */
    async current(ctx: Context) {
      const token = sessionToken(ctx);
      if (!token) throw signedOut();
      const { session, plan } = await auth.sessionPrincipal(token);
      ctx.set("Cache-Control", "no-store");
      ctx.body = { key_prefix: session!.keyPrefix, plan, csrf_token: session!.csrfToken } satisfies z.input<typeof Session>;
    },

    /** DELETE /console/session: ends it on the server (with its CSRF token) and clears the cookie. */
    async signOut(ctx: Context) {
      const token = sessionToken(ctx);
      if (token) {
        const live = await auth.sessionPrincipal(token).catch((err: unknown) => {
          if (err instanceof AppError && err.code === "AUTH_INVALID") return undefined;
          throw err;
        });
        if (live) {
          checkCsrf(ctx, live.session!.csrfToken);
          await call(identity, identity.deleteSession, { sessionToken: token });
        }
      }
      setSessionCookie(ctx, trustedProxies, "", 0);
      ctx.set("Cache-Control", "no-store");
      ctx.status = 204;
    },
  };
}

import { createHash } from "node:crypto";
import { identityV1 } from "@pressroom/contracts";
import { AppError, call } from "@pressroom/platform";
import type { Context } from "koa";

export interface Principal {
  keyId: string;
  plan: string;
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

/**
 * Authenticates Bearer keys through the identity service. Successes are
 * cached for a short time (keyed by the key's hash, never the key), so a
 * revocation takes effect everywhere within that time.
 */
export class Authenticator {
  private readonly cache = new Map<string, { principal: Principal; until: number }>();

  constructor(
    private readonly identity: identityV1.IdentityServiceClient,
    private readonly cacheMs: number,
  ) {}

  async authenticate(ctx: Context): Promise<Principal> {
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
}

import type { identityV1 } from "@pressroom/contracts";
import { call, type z } from "@pressroom/platform";
import type { Context } from "koa";
import { keyed, type KeyedDeps } from "../access/admission";
import { bearerKey } from "../access/auth";
import { bodyProblem, readJsonObject } from "../body";
import { clientIp, type TrustedProxies } from "../client-ip";
import { errors } from "../errors";
import { Plan, SIGNUP_HINTS, SignupRequest, SignupResponse, type RotatedWebhookSecret, type Usage, type WebhookSecret } from "./api";

/** What the key routes use: identity for the key and its secret, metering for usage and the rate limit. */
export interface KeyDeps extends KeyedDeps {
  identity: identityV1.IdentityServiceClient;
  trustedProxies: TrustedProxies;
}

export function keyRoutes(deps: KeyDeps) {
  const { identity, metering } = deps;
  return {
    /** GET /v1/keys/usage */
    async usage(ctx: Context) {
      const principal = await keyed(deps, ctx);
      const { usage } = await call(metering, metering.getUsage, { keyId: principal.keyId, plan: principal.plan });
      if (!usage) throw errors.internal();
      ctx.set("Cache-Control", "no-store");
      ctx.body = {
        plan: Plan.parse(usage.plan),
        period: { start: usage.periodStart, end: usage.periodEnd },
        renders: { used: Number(usage.rendersUsed), limit: Number(usage.rendersLimit), remaining: Number(usage.rendersRemaining) },
        previews: { used: Number(usage.previewsUsed), limit: Number(usage.previewsLimit), remaining: Number(usage.previewsRemaining) },
        rate_limit: { limit: usage.rate?.limit ?? 0, remaining: usage.rate?.remaining ?? 0, reset_seconds: usage.rate?.resetSeconds ?? 0, window_seconds: 60 },
        concurrency: { limit: usage.concurrencyLimit, in_flight: usage.inFlight },
      } satisfies z.input<typeof Usage>;
    },

    /** GET /v1/keys/webhook-secret: identity is shown the key itself, so the gateway reads only the secrets of the keys it is sent. */
    async webhookSecret(ctx: Context) {
      await keyed(deps, ctx);
      const { secret } = await call(identity, identity.getOwnWebhookSecret, { apiKey: bearerKey(ctx) });
      ctx.set("Cache-Control", "no-store");
      ctx.body = { secret } satisfies z.input<typeof WebhookSecret>;
    },

    /** POST /v1/keys/webhook-secret/rotate: a new secret, shown in this answer; the replaced one keeps signing callbacks for 24 h. */
    async rotateWebhookSecret(ctx: Context) {
      await keyed(deps, ctx);
      const rotated = await call(identity, identity.rotateWebhookSecret, { apiKey: bearerKey(ctx) });
      ctx.set("Cache-Control", "no-store");
      ctx.body = { secret: rotated.secret, previous_secret_expires_at: rotated.previousExpiresAt } satisfies z.input<typeof RotatedWebhookSecret>;
    },

    /** POST /v1/signup {"email"}: public, throttled per client IP. */
    async signup(ctx: Context) {
      const body = await readJsonObject(ctx, 16 * 1024);
      const parsed = SignupRequest.safeParse(body);
      if (!parsed.success) throw bodyProblem(SignupRequest, body, parsed.error, SIGNUP_HINTS);
      const result = await call(identity, identity.signup, { email: parsed.data.email, clientIp: clientIp(ctx, deps.trustedProxies) });
      ctx.status = 201;
      ctx.set("Cache-Control", "no-store");
      ctx.body = { api_key: result.apiKey, plan: SignupResponse.shape.plan.parse(result.key?.plan ?? "free") } satisfies z.input<typeof SignupResponse>;
    },
  };
}

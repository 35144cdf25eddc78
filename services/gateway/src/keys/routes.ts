import { call } from "@pressroom/platform";
import type { Context } from "koa";
import { keyed } from "../access/admission";
import { bearerKey } from "../access/auth";
import type { GatewayDeps } from "../deps";
import { onlyFields, readJsonObject } from "../http/body";
import { clientIp } from "../http/client-ip";
import { errors } from "../http/errors";

export function keyRoutes(deps: GatewayDeps) {
  const { identity, metering } = deps.clients;
  return {
    /** GET /v1/keys/usage */
    async usage(ctx: Context) {
      const principal = await keyed(deps, ctx);
      const { usage } = await call(metering, metering.getUsage, { keyId: principal.keyId, plan: principal.plan });
      if (!usage) throw errors.internal();
      ctx.set("Cache-Control", "no-store");
      ctx.body = {
        plan: usage.plan,
        period: { start: usage.periodStart, end: usage.periodEnd },
        renders: { used: Number(usage.rendersUsed), limit: Number(usage.rendersLimit), remaining: Number(usage.rendersRemaining) },
        rate_limit: { limit: usage.rate?.limit ?? 0, remaining: usage.rate?.remaining ?? 0, reset_seconds: usage.rate?.resetSeconds ?? 0, window_seconds: 60 },
        concurrency: { limit: usage.concurrencyLimit, in_flight: usage.inFlight },
      };
    },

    /** GET /v1/keys/webhook-secret: identity is shown the key itself, so the gateway reads only the secrets of the keys it is sent. */
    async webhookSecret(ctx: Context) {
      await keyed(deps, ctx);
      const { secret } = await call(identity, identity.getOwnWebhookSecret, { apiKey: bearerKey(ctx) });
      ctx.set("Cache-Control", "no-store");
      ctx.body = { secret };
    },

    /** POST /v1/keys/webhook-secret/rotate: a new secret, shown in this answer; the replaced one keeps signing callbacks for 24 h. */
    async rotateWebhookSecret(ctx: Context) {
      await keyed(deps, ctx);
      const rotated = await call(identity, identity.rotateWebhookSecret, { apiKey: bearerKey(ctx) });
      ctx.set("Cache-Control", "no-store");
      ctx.body = { secret: rotated.secret, previous_secret_expires_at: rotated.previousExpiresAt };
    },

    /** POST /v1/signup {"email"}: public, throttled per client IP. */
    async signup(ctx: Context) {
      const body = await readJsonObject(ctx, 16 * 1024);
      onlyFields(body, ["email"]);
      if (typeof body.email !== "string") throw errors.payload("email: required, a string", 'Send {"email": "you@example.com"}.');
      const result = await call(identity, identity.signup, { email: body.email, clientIp: clientIp(ctx, deps.trustedProxies) });
      ctx.status = 201;
      ctx.set("Cache-Control", "no-store");
      ctx.body = { api_key: result.apiKey, plan: result.key?.plan ?? "free" };
    },
  };
}

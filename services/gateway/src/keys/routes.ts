import type { identityV1, webhookV1 } from "@pressroom/contracts";
import { call, type z } from "@pressroom/platform";
import type { Context } from "koa";
import { keyed, type KeyedDeps } from "../access/admission";
import { holder } from "../access/auth";
import { bodyProblem, readJsonObject } from "../body";
import { clientIp, type TrustedProxies } from "../client-ip";
import { errors } from "../errors";
import { readQuery } from "../query";
import {
  DailyUsageQuery,
  Plan,
  SIGNUP_HINTS,
  SignupRequest,
  SignupResponse,
  type DailyUsage,
  type RotatedKey,
  type RotatedWebhookSecret,
  type Usage,
  type WebhookSecret,
} from "./api";

/** What the key routes use: identity for the key and its secret, metering for usage and the rate limit, the webhook service for usage per day. */
export interface KeyDeps extends KeyedDeps {
  identity: identityV1.IdentityServiceClient;
  webhook: webhookV1.WebhookServiceClient;
  trustedProxies: TrustedProxies;
}

const today = () => new Date().toISOString().slice(0, 10);

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
        test: { used: Number(usage.testUsed), limit: Number(usage.testLimit), remaining: Number(usage.testRemaining) },
        rate_limit: { limit: usage.rate?.limit ?? 0, remaining: usage.rate?.remaining ?? 0, reset_seconds: usage.rate?.resetSeconds ?? 0, window_seconds: 60 },
        concurrency: { limit: usage.concurrencyLimit, in_flight: usage.inFlight },
      } satisfies z.input<typeof Usage>;
    },

    /** GET /v1/keys/usage/daily: by default the current period (UTC month) to today. */
    async usageDaily(ctx: Context) {
      const principal = await keyed(deps, ctx);
      const query = readQuery(ctx, DailyUsageQuery, "Send from and to as UTC dates, e.g. ?from=2026-12-01&to=2026-12-31 (at most 92 days).");
      const to = query.to ?? today();
      const from = query.from ?? `${to.slice(0, 8)}01`;
      const { days } = await call(deps.webhook, deps.webhook.getDailyUsage, { keyId: principal.keyId, from, to });
      ctx.set("Cache-Control", "no-store");
      ctx.body = {
        data: days.map((d) => ({ date: d.date, succeeded: d.succeeded, failed: d.failed, refunded: d.refunded })),
      } satisfies z.input<typeof DailyUsage>;
    },

    /** GET /v1/keys/webhook-secret: identity is shown the key itself (or its console session), so the gateway reads only the secrets of the keys it is sent. */
    async webhookSecret(ctx: Context) {
      await keyed(deps, ctx);
      const { secret } = await call(identity, identity.getOwnWebhookSecret, holder(ctx));
      ctx.set("Cache-Control", "no-store");
      ctx.body = { secret } satisfies z.input<typeof WebhookSecret>;
    },

    /** POST /v1/keys/webhook-secret/rotate: a new secret, shown in this answer; the replaced one keeps signing callbacks for 24 h. */
    async rotateWebhookSecret(ctx: Context) {
      await keyed(deps, ctx);
      const rotated = await call(identity, identity.rotateWebhookSecret, holder(ctx));
      ctx.set("Cache-Control", "no-store");
      ctx.body = { secret: rotated.secret, previous_secret_expires_at: rotated.previousExpiresAt } satisfies z.input<typeof RotatedWebhookSecret>;
    },

    /** POST /v1/keys/rotate: the key's new value, shown in this answer; the replaced one keeps working for 24 h. */
    async rotateKey(ctx: Context) {
      await keyed(deps, ctx);
      const rotated = await call(identity, identity.rotateKey, holder(ctx));
      ctx.status = 201;
      ctx.set("Cache-Control", "no-store");
      ctx.body = { api_key: rotated.apiKey, previous_key_expires_at: rotated.previousKeyExpiresAt } satisfies z.input<typeof RotatedKey>;
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

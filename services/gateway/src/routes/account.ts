import { renderV1 } from "@pressroom/contracts";
import { AppError, call } from "@pressroom/platform";
import type { Context } from "koa";
import { keyed } from "../access/admission";
import type { GatewayDeps } from "../deps";
import { readJsonObject } from "../http/body";
import { errors } from "../http/errors";
import { clientIp } from "../http/client-ip";

export function onlyFields(body: Record<string, unknown>, allowed: string[]): void {
  const unknown = Object.keys(body).filter((field) => !allowed.includes(field));
  if (unknown.length) throw errors.payload(`unknown field${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}`, `Send only ${allowed.join(", ")}.`);
}

export function templateEntry(t: renderV1.Template) {
  const png = t.output === renderV1.OutputFormat.OUTPUT_FORMAT_PNG;
  return {
    id: t.id,
    version: t.version,
    name: t.name,
    description: t.description,
    output: png ? ("png" as const) : ("pdf" as const),
    ...(png && t.image
      ? { width: t.image.width, height: t.image.height, device_scale_factor: t.image.deviceScaleFactor || 1 }
      : {
          page: {
            format: t.page?.format ?? "A4",
            landscape: t.page?.landscape ?? false,
            margin: { top: t.page?.marginTop ?? "", right: t.page?.marginRight ?? "", bottom: t.page?.marginBottom ?? "", left: t.page?.marginLeft ?? "" },
            header: Boolean(t.page?.headerTemplate),
            footer: Boolean(t.page?.footerTemplate),
          },
        }),
    data_schema: JSON.parse(t.dataSchemaJson) as unknown,
    sample_data: JSON.parse(t.sampleDataJson) as unknown,
    preview_url: `/v1/templates/${t.id}/preview.png`,
  };
}

export function accountRoutes(deps: GatewayDeps) {
  const { identity, metering, catalog } = deps.clients;
  return {
    /** GET /v1/templates: public. */
    async listTemplates(ctx: Context) {
      const { templates } = await call(catalog, catalog.listTemplates, {});
      ctx.set("Cache-Control", "public, max-age=60");
      ctx.body = { templates: templates.map(templateEntry) };
    },

    /** GET /v1/templates/<id>/preview.png: public, rendered once per template version. */
    async templatePreview(ctx: Context) {
      const id = ctx.params.id as string;
      if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(id)) throw new AppError("TEMPLATE_NOT_FOUND", `template "${id}" does not exist`, "List the available templates with GET /v1/templates.");
      const preview = await call(catalog, catalog.getPreview, { id }, 60_000);
      ctx.status = 200;
      ctx.set("Cache-Control", "public, max-age=300");
      ctx.set("ETag", `"${id}-v${preview.version}"`);
      if (ctx.fresh) {
        ctx.status = 304;
        return;
      }
      ctx.type = "image/png";
      ctx.body = Buffer.from(preview.png);
    },

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

    /** GET /v1/keys/webhook-secret */
    async webhookSecret(ctx: Context) {
      const principal = await keyed(deps, ctx);
      const { secret } = await call(identity, identity.getWebhookSecret, { keyId: principal.keyId });
      ctx.set("Cache-Control", "no-store");
      ctx.body = { secret };
    },

    /** POST /v1/keys/webhook-secret/rotate: a new secret, shown in this answer; the replaced one keeps signing callbacks for 24 h. */
    async rotateWebhookSecret(ctx: Context) {
      const principal = await keyed(deps, ctx);
      const rotated = await call(identity, identity.rotateWebhookSecret, { keyId: principal.keyId });
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

import { randomBytes } from "node:crypto";
import Router from "@koa/router";
import { trace } from "@opentelemetry/api";
import Koa, { type Middleware } from "koa";
import type { GatewayDeps } from "./deps";
import { allowedMethods, errorMiddleware } from "./http/errors";
import { httpMetrics } from "./http/metrics";
import { pageRoutes } from "./pages/pages";
import { metaRoutes } from "./meta/routes";
import { keyRoutes } from "./keys/routes";
import { templateRoutes } from "./templates/routes";
import { billingRoutes } from "./billing/routes";
import { outputHandler } from "./outputs/routes";
import { jobHandler } from "./jobs/create";
import { jobView } from "./jobs/view";

export interface Route {
  method: "GET" | "POST";
  /** koa-router path; `:name` parameters. */
  path: string;
  handler: Middleware;
}

/**
 * Every route of the public API, in one table: the app registers these (and
 * the human pages of pages/pages.ts), and a unit test holds the OpenAPI
 * document to this list.
 */
export function routes(deps: GatewayDeps): Route[] {
  const keys = keyRoutes(deps);
  const templates = templateRoutes(deps);
  const meta = metaRoutes(deps);
  const billing = billingRoutes(deps);
  return [
    { method: "POST", path: "/v1/render", handler: jobHandler(deps, "render") },
    { method: "POST", path: "/v1/image", handler: jobHandler(deps, "image") },
    { method: "GET", path: "/v1/templates", handler: templates.listTemplates },
    { method: "GET", path: "/v1/templates/:id/preview.png", handler: templates.templatePreview },
    { method: "GET", path: "/v1/keys/usage", handler: keys.usage },
    { method: "GET", path: "/v1/keys/webhook-secret", handler: keys.webhookSecret },
    { method: "POST", path: "/v1/keys/webhook-secret/rotate", handler: keys.rotateWebhookSecret },
    { method: "POST", path: "/v1/billing/checkout", handler: billing.checkout },
    { method: "GET", path: "/v1/billing/checkout/:id", handler: billing.checkoutPage },
    { method: "POST", path: "/v1/billing/checkout/:id", handler: billing.confirm },
    { method: "POST", path: "/v1/billing/stripe/webhook", handler: billing.stripeWebhook },
    { method: "POST", path: "/v1/signup", handler: keys.signup },
    { method: "GET", path: "/v1/jobs/:id", handler: jobView(deps) },
    { method: "GET", path: "/v1/outputs/:id", handler: outputHandler(deps) },
    { method: "GET", path: "/v1/openapi.json", handler: meta.openApi },
    { method: "GET", path: "/livez", handler: meta.livez },
    { method: "GET", path: "/readyz", handler: meta.readyz },
  ];
}

/** Builds the public HTTP API. Nothing listens here; main.ts and tests do. */
export function createApp(deps: GatewayDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;

  app.use(httpMetrics());
  app.use(errorMiddleware(deps.logger));
  app.use(async (ctx, next) => {
    // The trace id; requests that are not traced (health probes) get an id of the same form.
    ctx.set("Request-Id", trace.getActiveSpan()?.spanContext().traceId ?? randomBytes(16).toString("hex"));
    ctx.set("X-Content-Type-Options", "nosniff");
    await next();
  });

  const router = new Router();
  for (const route of [...routes(deps), ...pageRoutes(deps)]) {
    if (route.method === "GET") router.get(route.path, route.handler);
    else router.post(route.path, route.handler);
  }
  app.use(allowedMethods());
  app.use(router.routes());
  return app;
}

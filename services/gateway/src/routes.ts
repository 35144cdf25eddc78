import type { Middleware } from "koa";
import { billingRoutes } from "./billing/routes";
import type { GatewayDeps } from "./deps";
import { jobHandler } from "./jobs/create";
import { jobView } from "./jobs/view";
import { keyRoutes } from "./keys/routes";
import { metaRoutes } from "./meta/routes";
import { outputHandler } from "./outputs/routes";
import { templateRoutes } from "./templates/routes";

export interface Route {
  method: "GET" | "POST";
  /** koa-router path; `:name` parameters. */
  path: string;
  handler: Middleware;
}

/**
 * Every route of the public API, in one table, with each handler from its
 * feature: createServer (server.ts) registers these (and the human pages of
 * pages/pages.ts), and a unit test holds the OpenAPI document to this list.
 */
export function routes(deps: GatewayDeps): Route[] {
  const templates = templateRoutes(deps);
  const keys = keyRoutes(deps);
  const billing = billingRoutes(deps);
  const meta = metaRoutes(deps);
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

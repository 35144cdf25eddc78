import { randomBytes } from "node:crypto";
import Router from "@koa/router";
import { trace } from "@opentelemetry/api";
import Koa from "koa";
import type { GatewayDeps } from "./deps";
import { allowedMethods, errorMiddleware } from "./errors";
import { httpMetrics } from "./http-metrics";
import { consolePages } from "./console/pages";
import { pageRoutes } from "./gallery/routes";
import { routes } from "./routes";

/**
 * Builds the public HTTP API. Nothing listens here: the service runner serves it on
 * HTTP_PORT (main.ts names it), and a test can build one without any.
 */
export function createServer(deps: GatewayDeps): Koa {
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
  const pages = pageRoutes({ catalog: deps.clients.catalog, templates: deps.templates, anonymous: deps.anonymous });
  for (const route of [...routes(deps), ...pages, ...consolePages()]) {
    router.register(route.path, [route.method], route.handler);
  }
  app.use(allowedMethods());
  app.use(router.routes());
  return app;
}

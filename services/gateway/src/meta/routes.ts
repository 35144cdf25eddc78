import { errorBody, notReady } from "@pressroom/platform";
import type { Context } from "koa";
import type { GatewayDeps } from "../deps";
import { openApiDocument } from "../openapi/document";

export function metaRoutes(deps: GatewayDeps) {
  const openApiBody = JSON.stringify(openApiDocument);
  return {
    /** GET /v1/openapi.json: public; the document is built once. */
    openApi(ctx: Context): void {
      ctx.type = "application/json";
      ctx.set("Cache-Control", "public, max-age=300");
      ctx.body = openApiBody;
    },

    /** GET /livez */
    livez(ctx: Context): void {
      ctx.set("Cache-Control", "no-store");
      ctx.body = { status: "ok" };
    },

    /** GET /readyz */
    async readyz(ctx: Context): Promise<void> {
      const ready = await deps.isReady();
      ctx.set("Cache-Control", "no-store");
      // Set, not thrown: the error middleware answers UNAVAILABLE on API routes as INTERNAL_ERROR.
      ctx.status = ready ? 200 : 503;
      ctx.body = ready ? { status: "ready" } : errorBody(notReady());
    },
  };
}

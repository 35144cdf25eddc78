import { errorBody, notReady, type z } from "@pressroom/platform";
import type { Context } from "koa";
import type { Health } from "./api";

/** What meta/ uses: the process's readiness, and the OpenAPI document (built once, on its first request). */
export interface MetaDeps {
  isReady: () => Promise<boolean>;
  openApiDocument: () => object;
}

export function metaRoutes(deps: MetaDeps) {
  let openApiBody: string | undefined;
  return {
    /** GET /v1/openapi.json: public. */
    openApi(ctx: Context): void {
      openApiBody ??= JSON.stringify(deps.openApiDocument());
      ctx.type = "application/json";
      ctx.set("Cache-Control", "public, max-age=300");
      ctx.body = openApiBody;
    },

    /** GET /livez */
    livez(ctx: Context): void {
      ctx.set("Cache-Control", "no-store");
      ctx.body = { status: "ok" } satisfies z.input<typeof Health>;
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

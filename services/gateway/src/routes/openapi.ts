import type { Context } from "koa";
import { openApiDocument } from "../openapi";

/** GET /v1/openapi.json: public; the document is built once. */
export function openApiHandler() {
  const body = JSON.stringify(openApiDocument);
  return (ctx: Context): void => {
    ctx.type = "application/json";
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.body = body;
  };
}

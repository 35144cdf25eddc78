import type { renderV1 } from "@pressroom/contracts";
import { call } from "@pressroom/platform";
import type { Context } from "koa";

/**
 * Answers a template's preview (a PNG rendered once per version with its sample data) with an
 * ETag of its version, 304 to a request that has it: for the API's preview.png (an own template's
 * with its key) and the gallery's (the public catalog's, never keyed).
 */
export async function sendPreview(ctx: Context, catalog: renderV1.TemplateCatalogServiceClient, id: string, owner: string): Promise<void> {
  const preview = await call(catalog, catalog.getPreview, { id, owner }, 60_000);
  ctx.status = 200;
  ctx.set("Cache-Control", owner ? "private, max-age=300" : "public, max-age=300");
  ctx.set("ETag", `"${id}-v${preview.version}"`);
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.type = "image/png";
  ctx.body = Buffer.from(preview.png);
}

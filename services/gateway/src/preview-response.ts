import type { Context } from "koa";

/**
 * Answers a template's preview (a PNG stored once per version with its sample data) with an ETag
 * of its version, 304 to a request that has it: for the API's preview.png (an own template's with
 * its key, private) and the gallery's (the public catalog's, never keyed, public).
 */
export function sendPreview(ctx: Context, id: string, preview: { png: Uint8Array; version: number }, keyed: boolean): void {
  ctx.status = 200;
  ctx.set("Cache-Control", keyed ? "private, max-age=300" : "public, max-age=300");
  ctx.set("ETag", `"${id}-v${preview.version}"`);
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.type = "image/png";
  ctx.body = Buffer.from(preview.png);
}

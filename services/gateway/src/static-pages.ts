import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { Context } from "koa";
import { errors } from "./errors";

/**
 * What the gateway's pages for people share (the gallery's, the console's): the strict
 * Content-Security-Policy they start from, how a page is sent, and their files, read and
 * gzipped once and served with an ETag.
 */

/** This origin only: no inline script, no inline style, nothing from elsewhere. Each page adds what it shows (img-src, frame-src). */
export const BASE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export const JS = "text/javascript; charset=utf-8";
export const CSS = "text/css; charset=utf-8";

export function sendPage(ctx: Context, html: string, csp: string, status = 200, cacheControl = "public, max-age=60"): void {
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.set("Content-Security-Policy", csp);
  ctx.set("Referrer-Policy", "same-origin");
  ctx.set("Cache-Control", status === 200 ? cacheControl : "no-store");
  ctx.body = html;
}

interface Asset {
  type: string;
  body: Buffer;
  gzipped: Buffer;
  etag: string;
}

const gzipAsync = promisify(gzip);

/** Files by their URL name; each read and compressed once, on its first request. */
export class StaticAssets {
  private readonly loaded = new Map<string, Promise<Asset>>();

  constructor(private readonly files: Record<string, { file: string; type: string }>) {}

  get(name: string): Promise<Asset> | undefined {
    const entry = this.files[name];
    if (!entry) return undefined;
    let asset = this.loaded.get(name);
    if (!asset) {
      asset = readFile(entry.file).then(async (body) => ({
        type: entry.type,
        body,
        gzipped: await gzipAsync(body),
        etag: `W/"${createHash("sha256").update(body).digest("hex").slice(0, 32)}"`,
      }));
      asset.catch(() => this.loaded.delete(name));
      this.loaded.set(name, asset);
    }
    return asset;
  }

  /** The handler of a route `…/:name` serving the files named `<prefix><name>`. */
  route(prefix = "") {
    return async (ctx: Context) => {
      const found = await this.get(`${prefix}${ctx.params.name as string}`);
      if (!found) throw errors.notFound();
      ctx.status = 200;
      ctx.vary("Accept-Encoding");
      ctx.set("Cache-Control", "public, max-age=3600");
      ctx.set("ETag", found.etag);
      if (ctx.fresh) {
        ctx.status = 304;
        return;
      }
      ctx.type = found.type;
      const gzipped = ctx.acceptsEncodings("gzip", "identity") === "gzip";
      if (gzipped) ctx.set("Content-Encoding", "gzip");
      ctx.body = gzipped ? found.gzipped : found.body;
    };
  }
}

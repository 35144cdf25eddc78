import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { AppError, call } from "@pressroom/platform";
import { TEMPLATE_ID_PATTERN } from "@pressroom/domain";
import type { Context } from "koa";
import type { renderV1 } from "@pressroom/contracts";
import { templateEntry } from "../catalog-entry";
import { errors } from "../errors";
import type { PageRoute } from "../route";
import type { AnonymousReads } from "../access/anonymous";
import type { TemplateDirectory } from "../template-directory";
import { docsPage, galleryPage, notFoundPage, templatePage } from "./views";

/**
 * The pages people read before they integrate: the template gallery (GET /),
 * each template's page (GET /templates/<id>) and the API reference (GET
 * /docs, Swagger UI over GET /v1/openapi.json). No key is needed to look;
 * "Try it" renders with the public demo key. Everything, Swagger UI
 * included, is served from the gateway itself: the Content-Security-Policy
 * allows this origin only, no inline script and no inline style.
 */

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
/** Previews and rendered PNGs as images, a rendered PDF in a frame: all from /v1 on this origin. */
const GALLERY_CSP = `${CSP}; img-src 'self'; frame-src 'self'`;
/** Swagger UI's stylesheet draws its icons as data: SVGs. */
const DOCS_CSP = `${CSP}; img-src 'self' data:`;

const SWAGGER_UI = path.dirname(require.resolve("swagger-ui-dist/package.json"));
const OWN = path.join(__dirname, "assets");
const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

/** Every file under /assets/, by its URL name. */
const FILES: Record<string, { file: string; type: string }> = {
  "pages.css": { file: path.join(OWN, "pages.css"), type: CSS },
  "try-it.mjs": { file: path.join(OWN, "try-it.mjs"), type: JS },
  "schema-check.mjs": { file: path.join(OWN, "schema-check.mjs"), type: JS },
  "docs.mjs": { file: path.join(OWN, "docs.mjs"), type: JS },
  "swagger-ui/swagger-ui.css": { file: path.join(SWAGGER_UI, "swagger-ui.css"), type: CSS },
  "swagger-ui/swagger-ui-bundle.js": { file: path.join(SWAGGER_UI, "swagger-ui-bundle.js"), type: JS },
};

interface Asset {
  type: string;
  body: Buffer;
  gzipped: Buffer;
  etag: string;
}

const gzipAsync = promisify(gzip);

/** Reads and compresses each asset once, on its first request. */
class Assets {
  private readonly loaded = new Map<string, Promise<Asset>>();

  get(name: string): Promise<Asset> | undefined {
    const entry = FILES[name];
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
}

function sendPage(ctx: Context, html: string, csp: string, status = 200): void {
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.set("Content-Security-Policy", csp);
  ctx.set("Referrer-Policy", "same-origin");
  ctx.set("Cache-Control", status === 200 ? "public, max-age=60" : "no-store");
  ctx.body = html;
}

/** What the pages use: the catalog for the gallery, the template directory for a template's page, and the limit and cache of reads without a key. */
export interface GalleryDeps {
  catalog: renderV1.TemplateCatalogServiceClient;
  templates: TemplateDirectory;
  anonymous: AnonymousReads;
}

export function pageRoutes(deps: GalleryDeps): PageRoute[] {
  const { catalog, anonymous } = deps;
  const assets = new Assets();

  const asset = (prefix: string) => async (ctx: Context) => {
    const found = await assets.get(`${prefix}${ctx.params.name as string}`);
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

  return [
    {
      method: "GET",
      path: "/",
      handler: async (ctx) => {
        anonymous.admit(ctx);
        const { templates } = await anonymous.cached("templates", () => call(catalog, catalog.listTemplates, { owner: "" }));
        sendPage(ctx, galleryPage(templates.map(templateEntry)), GALLERY_CSP);
      },
    },
    { method: "GET", path: "/templates", handler: (ctx) => ctx.redirect("/") },
    {
      method: "GET",
      path: "/templates/:id",
      handler: async (ctx) => {
        const id = ctx.params.id as string;
        anonymous.admit(ctx);
        const info = TEMPLATE_ID_PATTERN.test(id)
          ? await anonymous
              .cached(`page:${id}`, () => deps.templates.get(id))
              .catch((err: unknown) => {
                if (err instanceof AppError && err.code === "TEMPLATE_NOT_FOUND") return undefined;
                throw err;
              })
          : undefined;
        if (!info) return sendPage(ctx, notFoundPage(id), GALLERY_CSP, 404);
        sendPage(ctx, templatePage(templateEntry(info.template), `${ctx.protocol}://${ctx.host}`), GALLERY_CSP);
      },
    },
    { method: "GET", path: "/docs", handler: (ctx) => sendPage(ctx, docsPage(), DOCS_CSP) },
    { method: "GET", path: "/assets/:name", handler: asset("") },
    { method: "GET", path: "/assets/swagger-ui/:name", handler: asset("swagger-ui/") },
  ];
}

import path from "node:path";
import { AppError, call } from "@pressroom/platform";
import { TEMPLATE_ID_PATTERN } from "@pressroom/domain";
import type { renderV1 } from "@pressroom/contracts";
import { templateEntry } from "../catalog-entry";
import { sendPreview } from "../preview-response";
import type { PageRoute } from "../route";
import type { AnonymousReads } from "../access/anonymous";
import { BASE_CSP, CSS, JS, StaticAssets, sendPage } from "../static-pages";
import { errors } from "../errors";
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

/** Previews and rendered PNGs as images, a rendered PDF in a frame: all from /v1 on this origin. */
const GALLERY_CSP = `${BASE_CSP}; img-src 'self'; frame-src 'self'`;
/** Swagger UI's stylesheet draws its icons as data: SVGs. */
const DOCS_CSP = `${BASE_CSP}; img-src 'self' data:`;

const SWAGGER_UI = path.dirname(require.resolve("swagger-ui-dist/package.json"));
const OWN = path.join(__dirname, "assets");

/** Every file under /assets/, by its URL name. */
const FILES: Record<string, { file: string; type: string }> = {
  "pages.css": { file: path.join(OWN, "pages.css"), type: CSS },
  "try-it.mjs": { file: path.join(OWN, "try-it.mjs"), type: JS },
  "schema-check.mjs": { file: path.join(OWN, "schema-check.mjs"), type: JS },
  "docs.mjs": { file: path.join(OWN, "docs.mjs"), type: JS },
  "swagger-ui/swagger-ui.css": { file: path.join(SWAGGER_UI, "swagger-ui.css"), type: CSS },
  "swagger-ui/swagger-ui-bundle.js": { file: path.join(SWAGGER_UI, "swagger-ui-bundle.js"), type: JS },
};

/** What the pages use: the catalog for the gallery, the template directory for a template's page, and the limit and cache of reads without a key. */
export interface GalleryDeps {
  catalog: renderV1.TemplateCatalogServiceClient;
  templates: TemplateDirectory;
  anonymous: AnonymousReads;
}

export function pageRoutes(deps: GalleryDeps): PageRoute[] {
  const { catalog, anonymous } = deps;
  const assets = new StaticAssets(FILES);

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
    {
      // The gallery's own copy of a public template's preview: never keyed, so a browser signed in to the console
      // (whose cookie GET /v1/templates/{id}/preview.png would count against its key's rate) browses the gallery freely.
      method: "GET",
      path: "/templates/:id/preview.png",
      handler: async (ctx) => {
        const id = ctx.params.id as string;
        if (!TEMPLATE_ID_PATTERN.test(id)) throw errors.notFound();
        anonymous.admit(ctx);
        const preview = await anonymous.cached(`preview:${id}@0`, () =>
          call(catalog, catalog.getPreview, { id, owner: "", version: 0, render: false }, 60_000),
        );
        sendPreview(ctx, id, preview, false);
      },
    },
    { method: "GET", path: "/docs", handler: (ctx) => sendPage(ctx, docsPage(), DOCS_CSP) },
    { method: "GET", path: "/assets/:name", handler: assets.route() },
    { method: "GET", path: "/assets/swagger-ui/:name", handler: assets.route("swagger-ui/") },
  ];
}

import type { renderV1 } from "@pressroom/contracts";
import { call, type z } from "@pressroom/platform";
import { TEMPLATE_ID_PATTERN, planOf, templateNotFound } from "@pressroom/domain";
import type { Context } from "koa";
import { keyed, type KeyedDeps } from "../access/admission";
import { hasCredentials } from "../access/auth";
import { readJsonObject } from "../body";
import { templateEntry } from "../catalog-entry";
import { MAX_TEMPLATE_BODY_BYTES } from "../limits";
import { sendPreview } from "../preview-response";
import type { TemplateList, TemplateVersions } from "./api";
import { assetsOf, toProtoTemplate, validateTemplate } from "./request";

/** The longest a save may take: its preview waits for a render slot, then renders. */
const SAVE_DEADLINE_MS = 60_000;

export interface TemplateRouteDeps extends KeyedDeps {
  catalog: renderV1.TemplateCatalogServiceClient;
}

/** The id in the path; an id that cannot exist is not found, like one that does not. */
function pathId(ctx: Context): string {
  const id = ctx.params.id as string;
  if (!TEMPLATE_ID_PATTERN.test(id)) throw templateNotFound(id);
  return id;
}

/** The caller's key id when the request has a key or a console session (checked and counted), "" when it has none: the public catalog only. */
async function ownerOf(deps: KeyedDeps, ctx: Context): Promise<string> {
  if (!hasCredentials(ctx)) return "";
  return (await keyed(deps, ctx)).keyId;
}

export function templateRoutes(deps: TemplateRouteDeps) {
  const { catalog } = deps;

  async function save(ctx: Context, replace: boolean): Promise<void> {
    const principal = await keyed(deps, ctx);
    const id = replace ? pathId(ctx) : undefined;
    const input = validateTemplate(await readJsonObject(ctx, MAX_TEMPLATE_BODY_BYTES), id);
    if (input instanceof Error) throw input;
    const { template } = await call(
      catalog,
      catalog.saveTemplate,
      {
        owner: principal.keyId,
        replace,
        template: toProtoTemplate(input),
        html: input.html,
        assets: assetsOf(input),
        maxTemplates: planOf(principal.plan).templates,
        plan: principal.plan,
      },
      SAVE_DEADLINE_MS,
    );
    ctx.status = replace ? 200 : 201;
    ctx.set("Cache-Control", "no-store");
    ctx.body = templateEntry(template!);
  }

  async function getVersion(ctx: Context, version: number): Promise<void> {
    const owner = await ownerOf(deps, ctx);
    const { template } = await call(catalog, catalog.getTemplate, { id: pathId(ctx), owner, version });
    ctx.set("Cache-Control", owner ? "private, no-store" : "public, max-age=60");
    ctx.body = templateEntry(template!);
  }

  return {
    /** GET /v1/templates: the public catalog; with a key, the caller's own templates too. */
    async listTemplates(ctx: Context) {
      const owner = await ownerOf(deps, ctx);
      const { templates } = await call(catalog, catalog.listTemplates, { owner });
      ctx.set("Cache-Control", owner ? "private, no-store" : "public, max-age=60");
      ctx.body = { templates: templates.map(templateEntry) } satisfies z.input<typeof TemplateList>;
    },

    /** POST /v1/templates */
    createTemplate: (ctx: Context) => save(ctx, false),

    /** PUT /v1/templates/<id> */
    replaceTemplate: (ctx: Context) => save(ctx, true),

    /** GET /v1/templates/<id>: the current version. */
    getTemplate: (ctx: Context) => getVersion(ctx, 0),

    /** GET /v1/templates/<id>/versions/<n> */
    async getTemplateVersion(ctx: Context) {
      const n = ctx.params.n as string;
      if (!/^[1-9]\d{0,8}$/.test(n)) throw templateNotFound(ctx.params.id as string);
      await getVersion(ctx, Number(n));
    },

    /** GET /v1/templates/<id>/versions: newest first. */
    async listVersions(ctx: Context) {
      const owner = await ownerOf(deps, ctx);
      const { versions } = await call(catalog, catalog.listTemplateVersions, { id: pathId(ctx), owner });
      ctx.set("Cache-Control", owner ? "private, no-store" : "public, max-age=60");
      ctx.body = { versions: versions.map((v) => ({ version: v.version, created_at: v.createdAt })) } satisfies z.input<typeof TemplateVersions>;
    },

    /** DELETE /v1/templates/<id> */
    async deleteTemplate(ctx: Context) {
      const principal = await keyed(deps, ctx);
      await call(catalog, catalog.deleteTemplate, { id: pathId(ctx), owner: principal.keyId });
      ctx.status = 204;
    },

    /** GET /v1/templates/<id>/preview.png: public for the catalog, an own template's with its key; rendered once per template version. */
    async templatePreview(ctx: Context) {
      const owner = await ownerOf(deps, ctx);
      await sendPreview(ctx, catalog, pathId(ctx), owner);
    },
  };
}

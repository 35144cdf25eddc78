import type { renderV1 } from "@pressroom/contracts";
import { call, type z } from "@pressroom/platform";
import { TEMPLATE_ID_PATTERN, planOf, templateNotFound } from "@pressroom/domain";
import type { Context } from "koa";
import { keyed, type KeyedDeps } from "../access/admission";
import type { AnonymousReads } from "../access/anonymous";
import { hasCredentials, type Principal } from "../access/auth";
import { runPreview, type PreviewDeps } from "../access/previews";
import { readJsonObject } from "../body";
import { templateEntry } from "../catalog-entry";
import { MAX_TEMPLATE_BODY_BYTES } from "../limits";
import { contentDisposition } from "../output-delivery";
import { sendPreview } from "../preview-response";
import type { TemplateList, TemplateVersions } from "./api";
import { assetsOf, toProtoTemplate, validateTemplate, type TemplateInput } from "./request";
import type { CustomerSchemas } from "../schemas/schemas";

/** The longest a preview may take (a save's, a preview.png's): it waits in its render pod's bounded queue, then renders within its own deadline. */
const PREVIEW_CALL_MS = 60_000;

export interface TemplateRouteDeps extends KeyedDeps, PreviewDeps {
  catalog: renderV1.TemplateCatalogServiceClient;
  schemas: CustomerSchemas;
  anonymous: AnonymousReads;
}

/** The version in the path; one that cannot exist is not found, like one that does not. */
function versionParam(ctx: Context): number {
  const n = ctx.params.n as string;
  if (!/^[1-9]\d{0,8}$/.test(n)) throw templateNotFound(ctx.params.id as string);
  return Number(n);
}

/** The id a draft previewed without one is checked under (it is stored nowhere). */
const DRAFT_ID = "draft";

/** The id in the path; an id that cannot exist is not found, like one that does not. */
function pathId(ctx: Context): string {
  const id = ctx.params.id as string;
  if (!TEMPLATE_ID_PATTERN.test(id)) throw templateNotFound(id);
  return id;
}

export function templateRoutes(deps: TemplateRouteDeps) {
  const { catalog, anonymous } = deps;

  /**
   * The caller when the request has a key or a console session (checked and counted); without one, its address is
   * counted (anonymous.ts): the public catalog only.
   */
  async function callerOf(ctx: Context): Promise<Principal | undefined> {
    if (hasCredentials(ctx)) return keyed(deps, ctx);
    anonymous.admit(ctx);
    return undefined;
  }

  /** A catalog read: the caller's own view, or for a caller without a key the public answer, kept (anonymous.ts). */
  const read = <T>(caller: Principal | undefined, key: string, load: (owner: string) => Promise<T>): Promise<T> =>
    caller ? load(caller.keyId) : anonymous.cached(key, () => load(""));

  /** A template body, checked for `plan` (`id`: the path's, else the body's); its data schema and sample data on the schema threads. */
  async function checked(body: Record<string, unknown>, plan: string, id?: string): Promise<TemplateInput> {
    const input = validateTemplate(body, plan, id);
    if (input instanceof Error) throw input;
    const schemaProblem = await deps.schemas.check(input.data_schema ?? { type: "object" }, input.sample_data ?? {});
    if (schemaProblem) throw schemaProblem;
    return input;
  }

  async function save(ctx: Context, replace: boolean): Promise<void> {
    const principal = await keyed(deps, ctx);
    const id = replace ? pathId(ctx) : undefined;
    const input = await checked(await readJsonObject(ctx, MAX_TEMPLATE_BODY_BYTES), principal.plan, id);
    const request: renderV1.SaveTemplateRequest = {
      owner: principal.keyId,
      replace,
      template: toProtoTemplate(input),
      html: input.html,
      assets: assetsOf(input),
      maxTemplates: planOf(principal.plan).templates,
      plan: principal.plan,
      checkOnly: true,
    };
    // What would refuse the save (the id, the plan's limit, the source) answers before the preview is admitted.
    await call(catalog, catalog.saveTemplate, request);
    const { template } = await runPreview(deps, ctx, principal, ({ signal }) =>
      call(catalog, catalog.saveTemplate, { ...request, checkOnly: false }, PREVIEW_CALL_MS, signal),
    );
    ctx.status = replace ? 200 : 201;
    if (!replace) ctx.set("Location", `/v1/templates/${template!.id}`);
    ctx.set("Cache-Control", "no-store");
    ctx.body = templateEntry(template!);
  }

  /**
   * A version's preview (0: the current one's): public for the catalog, an own template's with its key. Stored once rendered
   * (per template version); an own template's that is not (yet) is rendered as one of the key's previews, admitted and counted.
   */
  async function preview(ctx: Context, version: number): Promise<void> {
    const caller = await callerOf(ctx);
    const id = pathId(ctx);
    const stored = (owner: string) => call(catalog, catalog.getPreview, { id, owner, version, render: false }, PREVIEW_CALL_MS);
    let answer = await read(caller, `preview:${id}@${version}`, stored);
    if (answer.absent && caller) {
      answer = await runPreview(
        deps,
        ctx,
        caller,
        ({ signal }) => call(catalog, catalog.getPreview, { id, owner: caller.keyId, version, render: true }, PREVIEW_CALL_MS, signal),
        (rendered) => rendered.rendered,
      );
    }
    sendPreview(ctx, id, answer, caller !== undefined);
  }

  async function getVersion(ctx: Context, version: number): Promise<void> {
    const caller = await callerOf(ctx);
    const id = pathId(ctx);
    const { template } = await read(caller, `template:${id}@${version}`, (owner) => call(catalog, catalog.getTemplate, { id, owner, version }));
    ctx.set("Cache-Control", caller ? "private, no-store" : "public, max-age=60");
    ctx.body = templateEntry(template!);
  }

  return {
    /** GET /v1/templates: the public catalog; with a key, the caller's own templates too. */
    async listTemplates(ctx: Context) {
      const caller = await callerOf(ctx);
      const { templates } = await read(caller, "templates", (owner) => call(catalog, catalog.listTemplates, { owner }));
      ctx.set("Cache-Control", caller ? "private, no-store" : "public, max-age=60");
      ctx.body = { templates: templates.map(templateEntry) } satisfies z.input<typeof TemplateList>;
    },

    /** POST /v1/templates */
    createTemplate: (ctx: Context) => save(ctx, false),

    /** PUT /v1/templates/<id> */
    replaceTemplate: (ctx: Context) => save(ctx, true),

    /** GET /v1/templates/<id>: the current version. */
    getTemplate: (ctx: Context) => getVersion(ctx, 0),

    /** GET /v1/templates/<id>/versions/<n> */
    getTemplateVersion: (ctx: Context) => getVersion(ctx, versionParam(ctx)),

    /** GET /v1/templates/<id>/versions/<n>/assets/<name>: the owner's file, always as a download that nothing runs. */
    async getTemplateAsset(ctx: Context) {
      const principal = await keyed(deps, ctx);
      const id = pathId(ctx);
      const version = versionParam(ctx);
      const name = ctx.params.name as string;
      const asset = await call(catalog, catalog.getTemplateAsset, { owner: principal.keyId, id, version, name });
      ctx.status = 200;
      ctx.type = asset.contentType;
      ctx.set("Content-Disposition", contentDisposition(name, true));
      ctx.set("Content-Security-Policy", "sandbox; default-src 'none'");
      ctx.set("X-Content-Type-Options", "nosniff");
      ctx.set("Cache-Control", "private, no-store");
      ctx.body = Buffer.from(asset.content);
    },

    /** GET /v1/templates/<id>/versions: newest first. */
    async listVersions(ctx: Context) {
      const caller = await callerOf(ctx);
      const id = pathId(ctx);
      const { versions } = await read(caller, `versions:${id}`, (owner) => call(catalog, catalog.listTemplateVersions, { id, owner }));
      ctx.set("Cache-Control", caller ? "private, no-store" : "public, max-age=60");
      ctx.body = { versions: versions.map((v) => ({ version: v.version, created_at: v.createdAt })) } satisfies z.input<typeof TemplateVersions>;
    },

    /** DELETE /v1/templates/<id> */
    async deleteTemplate(ctx: Context) {
      const principal = await keyed(deps, ctx);
      await call(catalog, catalog.deleteTemplate, { id: pathId(ctx), owner: principal.keyId });
      ctx.status = 204;
    },

    /** GET /v1/templates/<id>/preview.png: the current version's. */
    templatePreview: (ctx: Context) => preview(ctx, 0),

    /** GET /v1/templates/<id>/versions/<n>/preview.png: each version keeps its own. */
    templateVersionPreview: (ctx: Context) => preview(ctx, versionParam(ctx)),

    /**
     * POST /v1/templates/preview: an unsaved draft (a create's body, id optional) rendered with its sample data as a save's
     * preview is, admitted and counted like one; nothing is stored. What would refuse it (the body, the schema, the source
     * that does not compile, naming its line) answers 422 before the preview is admitted.
     */
    async previewDraft(ctx: Context) {
      const principal = await keyed(deps, ctx);
      const body = await readJsonObject(ctx, MAX_TEMPLATE_BODY_BYTES);
      const input = await checked(body.id === undefined ? { ...body, id: DRAFT_ID } : body, principal.plan);
      const request: renderV1.PreviewDraftRequest = {
        owner: principal.keyId,
        template: toProtoTemplate(input),
        html: input.html,
        assets: assetsOf(input),
        checkOnly: true,
      };
      await call(catalog, catalog.previewDraft, request);
      const { png } = await runPreview(deps, ctx, principal, ({ signal }) =>
        call(catalog, catalog.previewDraft, { ...request, checkOnly: false }, PREVIEW_CALL_MS, signal),
      );
      ctx.status = 200;
      ctx.set("Cache-Control", "no-store");
      ctx.type = "image/png";
      ctx.body = Buffer.from(png);
    },
  };
}

import { renderV1 } from "@pressroom/contracts";
import { AppError, unary, type Logger } from "@pressroom/platform";
import { publishAccountEvent, templateNotFound } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { JetStreamClient } from "nats";
import type { RenderDb } from "../db";
import { RenderFailure, paperPixels, type RenderEngine } from "../engine";
import { pageSettingsOf, templateKey, toProto, type TemplateCatalog } from "./catalog";
import type { TemplateRow } from "./catalog.repository";
import type { TemplateExpander } from "./expander";
import { compileProblem, newVersionOf } from "./own-template";
import { assetNames, checkSave, deleteTemplate, listVersions, saveVersion, type SaveRules } from "./own-templates.repository";

type PreviewSource = Pick<TemplateRow, "owner" | "body" | "sample_data" | "page" | "image"> & { settings: { script_errors?: "fail" | "ignore" } };

/** Previews kept in memory: every public template's, and the most recent of customers' own. */
const PREVIEWS_KEPT = 256;

const PREVIEW_HINT = "Fix the template so that it renders its sample_data (scripts, size, page count), then save it again.";

export function catalogService(deps: {
  catalog: TemplateCatalog;
  expander: TemplateExpander;
  engine: RenderEngine;
  db: Kysely<RenderDb>;
  js: JetStreamClient;
  deadlineMs: number;
  logger: Logger;
}): renderV1.TemplateCatalogServiceServer {
  const previews = new Map<string, Promise<Buffer>>();
  const keep = (key: string, preview: Promise<Buffer>) => {
    previews.set(key, preview);
    for (const oldest of previews.keys()) {
      if (previews.size <= PREVIEWS_KEPT) break;
      previews.delete(oldest);
    }
  };

  async function renderPng(source: PreviewSource, cacheKey: string | undefined, assets: ReadonlyMap<string, Uint8Array>): Promise<Buffer> {
    const html = await deps.expander.expand({ source: source.body, cacheKey, dataJson: JSON.stringify(source.sample_data), timeoutMs: deps.deadlineMs });
    const page = pageSettingsOf(source);
    const size = source.image ?? paperPixels(page?.format ?? "A4") ?? paperPixels("A4")!;
    const image = page?.landscape ? { width: size.height, height: size.width } : size;
    // An own template's customer HTML runs only in its owner's windows; the public catalog's in the shared ones.
    const keyId = source.owner ? { keyId: source.owner } : {};
    const output = await deps.engine.render({ html, kind: "png", image, assets, scriptErrors: source.settings.script_errors ?? "fail", ...keyId });
    return Buffer.from(output.data.buffer, output.data.byteOffset, output.data.byteLength);
  }

  async function renderPreview(id: string, owner: string): Promise<{ png: Buffer; version: number }> {
    const latest = await deps.catalog.find(id, owner);
    const key = templateKey(latest);
    let preview = previews.get(key);
    if (!preview) {
      preview = (async () => {
        const row = await deps.catalog.get(id, latest.version, latest.owner, latest.generation);
        return renderPng(row, key, await deps.catalog.assets(row));
      })();
      preview.catch(() => previews.delete(key));
      keep(key, preview);
    }
    return { png: await preview, version: latest.version };
  }

  /** A new version of an own template, stored only once its preview rendered; the preview is kept for GET preview.png. */
  async function save(req: renderV1.SaveTemplateRequest): Promise<renderV1.SaveTemplateResponse> {
    if (!req.owner || !req.template)
      throw new AppError("PAYLOAD_INVALID", "an own template needs its owner and fields", "Send the template with the key id that owns it.");
    const rules: SaveRules = { owner: req.owner, id: req.template.id, replace: req.replace, maxTemplates: req.maxTemplates, plan: req.plan };
    await checkSave(deps.db, rules);
    const problem = compileProblem(req.html);
    if (problem) throw new AppError("PAYLOAD_INVALID", `html: ${problem}`, "Fix the Handlebars source at that line and column.");
    const version = newVersionOf(req);
    const png = await renderPng(
      {
        owner: req.owner,
        body: req.html,
        sample_data: JSON.parse(version.row.sample_data) as Record<string, unknown>,
        page: version.page,
        image: version.image,
        settings: {},
      },
      undefined,
      version.assets,
    ).catch((err: unknown) => {
      if (err instanceof RenderFailure && !err.retryable) throw new AppError("RENDER_FAILED", `the preview failed: ${err.message}`, PREVIEW_HINT);
      if (err instanceof AppError && err.code === "RENDER_FAILED") throw new AppError("RENDER_FAILED", `the preview failed: ${err.message}`, PREVIEW_HINT);
      throw err;
    });
    const row = await saveVersion(deps.db, rules, version);
    keep(templateKey(row), Promise.resolve(png));
    const change = { templateId: row.id, version: row.version, sourceSha256: row.content_hash };
    await publishAccountEvent(deps.js, "render", {
      keyId: row.owner,
      actor: "customer",
      ...(req.replace ? { type: "account.template_versioned", templateVersioned: change } : { type: "account.template_created", templateCreated: change }),
    });
    return { template: toProto(row) };
  }

  async function remove(req: renderV1.DeleteTemplateRequest): Promise<renderV1.DeleteTemplateResponse> {
    if (!req.owner) throw templateNotFound(req.id);
    const last = await deleteTemplate(deps.db, req.owner, req.id);
    await publishAccountEvent(deps.js, "render", {
      keyId: req.owner,
      actor: "customer",
      type: "account.template_deleted",
      templateDeleted: { templateId: last.id, version: last.version, sourceSha256: last.content_hash },
    });
    return {};
  }

  return {
    listTemplates: unary(async (req: renderV1.ListTemplatesRequest) => ({ templates: (await deps.catalog.list(req.owner)).map(toProto) }), deps.logger),
    getTemplate: unary(async (req: renderV1.GetTemplateRequest) => {
      const row = await deps.catalog.find(req.id, req.owner, req.version);
      // An own template's source and file names are its owner's to edit; the catalog's are not answered.
      return { template: row.owner ? { ...toProto(row), html: row.body, assetNames: await assetNames(deps.db, row) } : toProto(row) };
    }, deps.logger),
    getPreview: unary((req: renderV1.GetPreviewRequest) => renderPreview(req.id, req.owner), deps.logger),
    saveTemplate: unary(save, deps.logger),
    listTemplateVersions: unary(
      async (req: renderV1.ListTemplateVersionsRequest) => ({
        versions: (await listVersions(deps.db, req.owner, req.id)).map((v) => ({ version: v.version, createdAt: v.created_at.toISOString() })),
      }),
      deps.logger,
    ),
    deleteTemplate: unary(remove, deps.logger),
  };
}

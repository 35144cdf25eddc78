import { renderV1 } from "@pressroom/contracts";
import { AppError, callSignal, unary, type Logger } from "@pressroom/platform";
import { camelKeys, publishAccountEvent, templateNotFound, type RenderOptions } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { JetStreamClient } from "nats";
import type { RenderDb } from "../db";
import { assetContentType, type RenderEngine } from "../engine";
import { postProcessingOf, type PostProcessing, type PostProcessor } from "../postprocess/client";
import { templateKey, toProto, type TemplateCatalog } from "./catalog";
import type { TemplateRow } from "./catalog.repository";
import { previewJob, type PreviewTemplate } from "./engine-job";
import type { TemplateExpander } from "./expander";
import { compileProblem, newVersionOf } from "./own-template";
import { assetList, checkSave, deleteTemplate, listVersions, loadAsset, saveVersion, type SaveRules } from "./own-templates.repository";
import type { PreviewQueue } from "./preview-queue";
import { Previews } from "./previews";
import { dropPreviews } from "./previews.repository";

type PreviewSource = PreviewTemplate & Pick<TemplateRow, "body" | "sample_data" | "options">;

/** What of a template's post-processing shows on its page (its watermark), or undefined for none. */
function visibleSteps(options: RenderOptions): PostProcessing | undefined {
  const { watermark } = postProcessingOf(options);
  return watermark ? { watermark, pdfua: false, test: false } : undefined;
}

export function catalogService(deps: {
  catalog: TemplateCatalog;
  expander: TemplateExpander;
  engine: RenderEngine;
  /** Draws a pdf template's first page. */
  postprocessor: Pick<PostProcessor, "pagePng">;
  db: Kysely<RenderDb>;
  js: JetStreamClient;
  /** A preview's own deadline, template expansion included (RENDER_PREVIEW_DEADLINE_MS). */
  previewDeadlineMs: number;
  /** What a preview's printed PDF and its png may weigh (RENDER_MAX_OUTPUT_BYTES). */
  maxOutputBytes: number;
  previewQueue: PreviewQueue;
  logger: Logger;
}): renderV1.TemplateCatalogServiceServer {
  /** A template's preview (see previewJob): the png an image template makes, or the first page of the PDF a pdf template prints. */
  async function renderPng(source: PreviewSource, cacheKey: string | undefined, assets: ReadonlyMap<string, Uint8Array>, signal: AbortSignal): Promise<Buffer> {
    const deadlineAt = performance.now() + deps.previewDeadlineMs;
    const left = () => Math.max(1, Math.floor(deadlineAt - performance.now()));
    const dataJson = JSON.stringify(source.sample_data);
    const expand = (text: string, key?: string) => deps.expander.expand({ source: text, cacheKey: key, dataJson, timeoutMs: left() });
    const options = camelKeys(source.options) as RenderOptions;
    const filled = (text: string | undefined) => (text === undefined ? undefined : expand(text));
    const [html, headerHtml, footerHtml] = await Promise.all([expand(source.body, cacheKey), filled(options.headerHtml), filled(options.footerHtml)]);
    const job = previewJob(source, html, assets, { ...options, headerHtml, footerHtml, pageRanges: options.pageRanges?.replace(/\s+/g, "") });
    const output = await deps.engine.render({ ...job, deadlineMs: left(), jobDeadlineMs: deps.previewDeadlineMs }, { signal });
    const png =
      job.kind === "pdf"
        ? await deps.postprocessor.pagePng(output.data, visibleSteps(options), { deadlineAt, maxOutputBytes: deps.maxOutputBytes }, signal)
        : output.data;
    return Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  }

  const previews = new Previews({
    db: deps.db,
    queue: deps.previewQueue,
    renderStored: async (row, signal) => renderPng(row, templateKey(row), await deps.catalog.assets(row), signal),
  });

  /** The source compiles, or PAYLOAD_INVALID names its line and column. */
  function compiles(html: string): void {
    const problem = compileProblem(html);
    if (problem) throw new AppError("PAYLOAD_INVALID", `html: ${problem}`, "Fix the Handlebars source at that line and column.");
  }

  /** The preview of a version not stored (a save's before it is, a draft's): its sample data rendered in the preview queue. */
  function renderNew(owner: string, version: ReturnType<typeof newVersionOf>, signal: AbortSignal): Promise<Buffer> {
    const sample = JSON.parse(version.row.sample_data) as Record<string, unknown>;
    const options = JSON.parse(version.row.options ?? "{}") as Record<string, unknown>;
    const source = { owner, body: version.row.body, sample_data: sample, options, page: version.page, image: version.image, settings: {} };
    return previews.run(signal, (inQueue) => renderPng(source, undefined, version.assets, inQueue));
  }

  /** A new version of an own template, stored only once its preview rendered; the preview is stored with it for GET preview.png. */
  async function save(req: renderV1.SaveTemplateRequest, signal: AbortSignal): Promise<renderV1.SaveTemplateResponse> {
    if (!req.owner || !req.template)
      throw new AppError("PAYLOAD_INVALID", "an own template needs its owner and fields", "Send the template with the key id that owns it.");
    const rules: SaveRules = {
      owner: req.owner,
      id: req.template.id,
      replace: req.replace,
      output: req.template.output === renderV1.OutputFormat.OUTPUT_FORMAT_PNG ? "png" : "pdf",
      maxTemplates: req.maxTemplates,
      plan: req.plan,
    };
    await checkSave(deps.db, rules);
    compiles(req.html);
    if (req.checkOnly) return { template: undefined };
    const version = newVersionOf(req);
    const png = await renderNew(req.owner, version, signal);
    const row = await saveVersion(deps.db, rules, version);
    await previews.keep(row, png);
    const change = { templateId: row.id, version: row.version, sourceSha256: row.content_hash };
    await publishAccountEvent(deps.js, "render", {
      keyId: row.owner,
      actor: "customer",
      ...(req.replace ? { type: "account.template_versioned", templateVersioned: change } : { type: "account.template_created", templateCreated: change }),
    });
    return { template: toProto(row) };
  }

  /** An unsaved draft's preview: rendered like a save's, stored nowhere. */
  async function draft(req: renderV1.PreviewDraftRequest, signal: AbortSignal): Promise<renderV1.PreviewDraftResponse> {
    if (!req.owner || !req.template)
      throw new AppError("PAYLOAD_INVALID", "a draft needs its owner and fields", "Send the draft with the key id that previews it.");
    compiles(req.html);
    if (req.checkOnly) return { png: Buffer.alloc(0) };
    return { png: await renderNew(req.owner, newVersionOf(req), signal) };
  }

  async function remove(req: renderV1.DeleteTemplateRequest): Promise<renderV1.DeleteTemplateResponse> {
    if (!req.owner) throw templateNotFound(req.id);
    const last = await deleteTemplate(deps.db, req.owner, req.id);
    await dropPreviews(deps.db, req.owner, req.id);
    await publishAccountEvent(deps.js, "render", {
      keyId: req.owner,
      actor: "customer",
      type: "account.template_deleted",
      templateDeleted: { templateId: last.id, version: last.version, sourceSha256: last.content_hash },
    });
    return {};
  }

  return {
    listTemplates: unary(
      async (req: renderV1.ListTemplatesRequest) => ({ templates: (await deps.catalog.list(req.owner)).map((row) => toProto(row)) }),
      deps.logger,
    ),
    getTemplate: unary(async (req: renderV1.GetTemplateRequest) => {
      const row = await deps.catalog.find(req.id, req.owner, req.version);
      // An own template's source and file names are its owner's to edit; the catalog's are not answered.
      if (row.owner) {
        const assets = await assetList(deps.db, row);
        return {
          template: {
            ...toProto(row),
            html: row.body,
            assetNames: assets.map((a) => a.name),
            assets: assets.map((a) => ({ name: a.name, sizeBytes: String(a.size) })),
          },
        };
      }
      return { template: toProto(row, await deps.catalog.shadowed(row.id)) };
    }, deps.logger),
    getPreview: unary(
      async (req: renderV1.GetPreviewRequest, call) => previews.read(await deps.catalog.find(req.id, req.owner, req.version), req.render, callSignal(call)),
      deps.logger,
    ),
    previewDraft: unary((req: renderV1.PreviewDraftRequest, call) => draft(req, callSignal(call)), deps.logger),
    saveTemplate: unary((req: renderV1.SaveTemplateRequest, call) => save(req, callSignal(call)), deps.logger),
    listTemplateVersions: unary(
      async (req: renderV1.ListTemplateVersionsRequest) => ({
        versions: (await listVersions(deps.db, req.owner, req.id)).map((v) => ({ version: v.version, createdAt: v.created_at.toISOString() })),
      }),
      deps.logger,
    ),
    deleteTemplate: unary(remove, deps.logger),
    getTemplateAsset: unary(async (req: renderV1.GetTemplateAssetRequest) => {
      // Only an own template's, by its owner: find answers another account's as not found, and a public one is refused the same way.
      const row = req.owner && req.version > 0 ? await deps.catalog.find(req.id, req.owner, req.version) : undefined;
      if (!row?.owner) throw templateNotFound(req.id);
      const content = await loadAsset(deps.db, row, req.name);
      if (!content)
        throw new AppError(
          "NOT_FOUND",
          `version ${row.version} of template "${row.id}" has no asset "${req.name}"`,
          "Its asset names are in GET /v1/templates/<id>/versions/<n> (assets).",
        );
      return { content, contentType: assetContentType(req.name) };
    }, deps.logger),
  };
}

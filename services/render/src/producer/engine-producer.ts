import { jobEventsV1 } from "@pressroom/contracts";
import { downloadName, optionsOfContract, type RenderOptions } from "@pressroom/domain";
import { AppError, withSpan } from "@pressroom/platform";
import type { TemplateRow } from "../catalog/catalog.repository";
import { templateKey } from "../catalog/catalog";
import { engineJob } from "../catalog/engine-job";
import type { TemplateExpander } from "../catalog/expander";
import { RenderFailure, outputCap, pageCredentials, type RenderCallOptions, type RenderEngine, type RenderJob, type RenderOutput } from "../engine";
import { postProcessingOf, wantsPostProcessing, type PostProcessor } from "../postprocess/client";
import { renderMetrics } from "./metrics";
import type { DocumentJob, DocumentProducer, OutputFormat, ProducedDocument } from "./producer";

/** Where a job's template comes from: exactly the version it was admitted with (TemplateCatalog). */
export interface TemplateSource {
  get(id: string, version: number, owner: string, generation: number): Promise<TemplateRow>;
  assets(row: TemplateRow): Promise<Map<string, Buffer>>;
}

export interface EngineProducerDeps {
  engine: RenderEngine;
  templates: TemplateSource;
  expander: TemplateExpander;
  /** Merging and post-processing, in a process that holds no credential (postprocess-main.ts). */
  postprocessor: PostProcessor;
  /** The render deadline, template expansion and post-processing included. */
  deadlineMs: number;
  /** The output size cap, held again after a merge or post-processing (a PDF/A-1 page flattened into an image grows). */
  maxOutputBytes: number;
}

/**
 * Makes a job's document on the render engine: its source expanded (a template with the job's
 * data off the event loop, raw HTML the same way, a url's page fetched through the network
 * guard), rendered in a window only its key's jobs use, or each of its documents rendered and
 * their pages merged in order; then the post-processing its options ask for (both in the
 * post-processing process, which holds no credential); all within one
 * render deadline. The page a single document was rendered on is kept from its reset until
 * the document is released.
 */
export class EngineProducer implements DocumentProducer {
  constructor(private readonly deps: EngineProducerDeps) {}

  async produce(job: DocumentJob, signal: AbortSignal): Promise<ProducedDocument> {
    const { request } = job;
    const started = performance.now();
    const deadlineAt = started + this.deps.deadlineMs;
    const options = optionsOfContract(request.options);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    try {
      const printed =
        request.documents.length > 0
          ? await this.renderDocuments(job, request.documents, options, deadlineAt, signal)
          : await this.renderOne(job.keyId, job.jobId, request, options, { signal, holdPageUntil: released });
      const steps = postProcessingOf(options, request.test);
      signal.throwIfAborted();
      const output =
        printed.contentType === "application/pdf" && wantsPostProcessing(steps)
          ? { ...printed, data: await this.deps.postprocessor.postProcess(printed.data, steps, { deadlineAt, maxOutputBytes: this.deps.maxOutputBytes }) }
          : request.test
            ? { ...printed, data: await this.stampedImage(printed, deadlineAt) }
            : printed;
      if (output.data.byteLength > this.deps.maxOutputBytes) throw outputCap(this.deps.maxOutputBytes);
      const format = formatOf(output.contentType);
      return {
        data: output.data,
        contentType: output.contentType,
        format,
        pages: output.pages,
        renderMs: Math.round(performance.now() - started),
        filename: downloadName(options.filename, `${request.templateId || "document"}-${job.jobId}`, format),
        attachment: options.disposition === undefined ? Boolean(options.filename) : options.disposition === "attachment",
        scriptErrors: output.scriptErrors ?? [],
        release,
      };
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * A test-mode image, stamped TEST by the post-processing process (a png: the only kind the gateway
   * admits in test mode, and the only kind handed over in it).
   */
  private stampedImage(printed: RenderOutput, deadlineAt: number): Promise<Uint8Array> {
    if (printed.contentType !== "image/png") throw new RenderFailure("invalid_document", "a test-mode image is a png: its TEST stamp is drawn on the png");
    return this.deps.postprocessor.stampPng(printed.data, { deadlineAt, maxOutputBytes: this.deps.maxOutputBytes });
  }

  /** Renders one document (the job's source, or one part of it) in a window only its key's jobs use. */
  private async renderOne(
    keyId: string,
    jobId: string,
    source: jobEventsV1.JobAccepted,
    options: RenderOptions,
    call: RenderCallOptions & { signal: AbortSignal },
    deadlineAt?: number,
  ): Promise<RenderOutput> {
    const renderJob = withinDeadline(await this.engineJobOf(keyId, source, options, call.signal), deadlineAt);
    call.signal.throwIfAborted();
    const started = performance.now();
    const format: OutputFormat = renderJob.kind === "pdf" ? "pdf" : (renderJob.options?.imageFormat ?? "png");
    return withSpan("render", { attributes: { "pressroom.job.id": jobId, "pressroom.render.kind": renderJob.kind } }, () =>
      this.deps.engine.render(renderJob, call),
    ).then(
      (rendered) => {
        renderMetrics.rendered(format, started, { bytes: rendered.data.byteLength, pages: rendered.pages });
        return rendered;
      },
      (err: unknown) => {
        renderMetrics.rendered(format, started, { reason: err instanceof RenderFailure ? err.reason : "error" });
        throw err;
      },
    );
  }

  /**
   * A merged PDF: each part rendered in its own page, one after the other, within what is left
   * of the job's deadline, and written to disk as it comes (their total held to the output cap),
   * then their pages joined in order. A part that fails fails the job, its error naming the
   * part's index.
   */
  private async renderDocuments(
    job: DocumentJob,
    parts: jobEventsV1.DocumentPart[],
    options: RenderOptions,
    deadlineAt: number,
    signal: AbortSignal,
  ): Promise<RenderOutput> {
    let pages = 0;
    let renderMs = 0;
    const scriptErrors: string[] = [];
    // What the whole request says of every part's script and sub-resources.
    const strictness = { failOnScriptError: options.failOnScriptError, failOnResourceError: options.failOnResourceError };
    const data = await this.deps.postprocessor.merge(
      async (add) => {
        for (const [index, part] of parts.entries()) {
          const source = jobEventsV1.JobAccepted.fromPartial({ ...part, kind: jobEventsV1.JobKind.JOB_KIND_RENDER });
          const rendering = this.renderOne(job.keyId, job.jobId, source, { ...optionsOfContract(part.options), ...strictness }, { signal }, deadlineAt);
          const printed = await rendering.catch((err: unknown) => Promise.reject(signal.aborted ? err : namingPart(err, index)));
          await add(printed.data).catch((err: unknown) => Promise.reject(namingPart(err, index)));
          pages += printed.pages;
          renderMs += printed.renderMs;
          scriptErrors.push(...(printed.scriptErrors ?? []).map((line) => `documents[${index}]: ${line}`));
        }
        signal.throwIfAborted();
      },
      { deadlineAt, maxOutputBytes: this.deps.maxOutputBytes },
    );
    return { data, contentType: "application/pdf", pages, renderMs, scriptErrors };
  }

  /**
   * What the engine renders for one source: the template (exactly the version the job was
   * admitted with, of its owner, "" the public catalog, even if deleted since) or raw HTML
   * expanded off the event loop, or a url's page fetched through the network guard (with its
   * url_options' credentials, which its sub-requests on its origin get too); the header
   * and footer filled with the same data. The render gets what is left of the deadline.
   */
  private async engineJobOf(keyId: string, source: jobEventsV1.JobAccepted, options: RenderOptions, signal: AbortSignal): Promise<RenderJob> {
    const started = performance.now();
    const { deadlineMs, expander, templates } = this.deps;
    const left = () => Math.max(1, Math.floor(deadlineMs - (performance.now() - started)));
    const expand = (text: string, cacheKey?: string) => expander.expand({ source: text, cacheKey, keyId, dataJson: source.dataJson, timeoutMs: deadlineMs });
    const [headerHtml, footerHtml] = await Promise.all([options.headerHtml, options.footerHtml].map((text) => (text === undefined ? undefined : expand(text))));
    const filled = { ...options, headerHtml, footerHtml };
    const timing = { jobDeadlineMs: deadlineMs };
    if (source.templateId) {
      const row = await templates.get(source.templateId, source.templateVersion, source.templateOwner, source.templateGeneration);
      const [html, assets] = await Promise.all([expand(row.body, templateKey(row)), templates.assets(row)]);
      renderMetrics.templateExpanded(started);
      return { ...engineJob(row, { html, kind: row.output, options: filled, keyId, assets }), ...timing, deadlineMs: left() };
    }
    const kind = source.kind === jobEventsV1.JobKind.JOB_KIND_IMAGE ? "png" : "pdf";
    const credentials = source.url ? pageCredentials(source.url, source.urlOptions) : undefined;
    const html = source.url
      ? await this.deps.engine.fetchPage(source.url, { timeoutMs: left(), signal, credentials })
      : await expand(source.html).finally(() => renderMetrics.templateExpanded(started));
    return { ...engineJob(undefined, { html, kind, options: filled, keyId }), ...timing, deadlineMs: left(), credentials };
  }
}

/** The output label of a content type: pdf, or the image's format. */
function formatOf(contentType: RenderOutput["contentType"]): OutputFormat {
  return contentType === "application/pdf" ? "pdf" : (contentType.slice("image/".length) as OutputFormat);
}

/** A part's job within what is left of the whole job's deadline (`deadlineAt`, performance.now() time); none left fails it `deadline`. */
function withinDeadline(job: RenderJob, deadlineAt: number | undefined): RenderJob {
  if (deadlineAt === undefined) return job;
  const left = Math.floor(deadlineAt - performance.now());
  if (left <= 0) throw new RenderFailure("deadline", `the documents did not render within the render deadline (${job.jobDeadlineMs ?? 0} ms)`);
  return { ...job, deadlineMs: Math.min(job.deadlineMs ?? left, left) };
}

/** The error of the part at `index`, saying so (documents[0] is the first part). */
function namingPart(err: unknown, index: number): unknown {
  const prefix = `documents[${index}]: `;
  if (err instanceof RenderFailure) return new RenderFailure(err.reason, prefix + err.message);
  if (err instanceof AppError) return new AppError(err.code, prefix + err.message, err.hint, err.details);
  return err;
}

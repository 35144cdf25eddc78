import { jobEventsV1, storageV1 } from "@pressroom/contracts";
import {
  AppError,
  EventConsumer,
  consumers,
  isWrongLastSequence,
  RENDER_ATTEMPTS,
  streams,
  subjects,
  SUBMIT_GIVE_UP_MS,
  withSpan,
  type Logger,
} from "@pressroom/platform";
import {
  announceOutcome,
  appendJobEvent,
  isTerminal,
  jobEvent,
  outcomeInboxOf,
  readJobEvents,
  readLastJobEvent,
  retainedAcceptance,
  foldJob,
  downloadName,
  optionsOfContract,
  storeOutput,
  type AnnouncedOutput,
  type JobState,
} from "@pressroom/domain";
import type { JetStreamClient, JetStreamManager, JsMsg, NatsConnection } from "nats";
import { templateKey, type TemplateCatalog } from "../catalog/catalog";
import { engineJob } from "../catalog/engine-job";
import type { TemplateExpander } from "../catalog/expander";
import { RenderFailure, outputCap, type RenderCallOptions, type RenderEngine, type RenderJob, type RenderOutput } from "../engine";
import { merge, postProcess, postProcessingOf, wantsPostProcessing } from "../postprocess";
import { outputLabelOf, renderMetrics } from "./metrics";

export interface WorkerDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  engine: RenderEngine;
  catalog: TemplateCatalog;
  expander: TemplateExpander;
  /** The render deadline, template expansion included. */
  deadlineMs: number;
  storage: storageV1.StorageServiceClient;
  /** Storage's output bucket, where the worker writes an output's bytes before storage registers them. */
  outputBucket: string;
  /** The largest output announced with its bytes (see announcedOutput); 0: none. */
  announcedOutputMaxBytes: number;
  /** The output size cap, held again after a merge or post-processing (a PDF/A-1 page flattened into an image grows). */
  maxOutputBytes: number;
  logger: Logger;
  workerName: string;
  slots: number;
}

/** Room left in an announcement for the event and the framing around the output. */
const ANNOUNCEMENT_OVERHEAD_BYTES = 16 * 1024;

/** How often a long render tells JetStream it is still working on the message. */
const HEARTBEAT_MS = 10_000;

class StaleJob extends Error {}

/** A command stored after the gateway had given up on it (see SUBMIT_GIVE_UP_MS). */
class AbandonedCommand extends Error {}

/**
 * Consumes render commands from the RENDER work queue, at most `slots` at a
 * time, and drives each job through started → succeeded | failed with
 * optimistic appends, so a redelivered job can never succeed twice.
 */
export class RenderWorker extends EventConsumer<jobEventsV1.RenderCommand> {
  constructor(private readonly deps: WorkerDeps) {
    super(
      { js: deps.js, stream: streams.RENDER, consumer: consumers.renderWorkers, concurrency: deps.slots, prefetch: 0 },
      {
        spanSubject: subjects.renderRequested,
        logger: deps.logger,
        decode: (msg) => jobEventsV1.RenderCommand.decode(msg.data),
        attributes: (command, msg) => ({ "pressroom.job.id": command.jobId, "pressroom.attempt": msg.info.redeliveryCount }),
      },
    );
  }

  protected onError(err: unknown, msg: JsMsg): void {
    this.deps.logger.error({ err, seq: msg.seq }, "handling a render command failed; it will be redelivered");
    msg.nak(1_000);
  }

  protected async apply(command: jobEventsV1.RenderCommand, msg: JsMsg): Promise<void> {
    const attempt = msg.info.redeliveryCount;
    if (attempt > RENDER_ATTEMPTS) {
      // Every attempt died (killed, out of memory) before recording an outcome: this delivery records it.
      this.deps.logger.error({ jobId: command.jobId, attempts: RENDER_ATTEMPTS }, "every render attempt died; failing the job");
      await this.settleFailure(msg, command, new Error(`all ${RENDER_ATTEMPTS} render attempts died`));
      return;
    }
    const heartbeat = setInterval(() => msg.working(), HEARTBEAT_MS);
    try {
      await this.process(command, attempt, msg.info.timestampNanos / 1e6);
      msg.ack();
    } catch (err) {
      if (err instanceof StaleJob) {
        msg.ack();
        return;
      }
      if (err instanceof AbandonedCommand) {
        this.deps.logger.warn({ jobId: command.jobId }, "render command stored after the gateway gave up on it; dropped");
        msg.ack();
        return;
      }
      if (!worthRetrying(err) || attempt >= RENDER_ATTEMPTS) {
        await this.settleFailure(msg, command, err);
      } else {
        // Ours (a browser crash, a dependency down), or pages lost together: another attempt, on this worker or another.
        this.deps.logger.warn({ err, jobId: command.jobId, attempt }, "render failed on our side; redelivering");
        msg.nak(err instanceof RenderFailure && attempt === 1 ? 250 : 1_000 * attempt);
      }
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Records the job's failure and acks its command; a failure to record leaves it for the next delivery. */
  private async settleFailure(msg: JsMsg, command: jobEventsV1.RenderCommand, err: unknown): Promise<void> {
    try {
      await this.fail(command, err);
      msg.ack();
    } catch (failErr) {
      this.deps.logger.error({ err: failErr, jobId: command.jobId }, "could not record the failure; redelivering");
      msg.nak(1_000);
    }
  }

  /** Loads the job and restores its acceptance if the gateway could not append it (unless the gateway gave the job up). */
  private async loadJob(command: jobEventsV1.RenderCommand, storedAtMs: number): Promise<JobState> {
    // Usually the acceptance is the job's only event: one read settles it.
    const last = await readLastJobEvent(this.deps.jsm, command.jobId);
    const fresh = last && last.event.id === command.accepted?.id ? foldJob([last]) : undefined;
    if (fresh) return fresh;
    let job = foldJob(await readJobEvents(this.deps.jsm, command.jobId));
    if (!job && command.accepted) {
      if (storedAtMs - Date.parse(command.accepted.time) > SUBMIT_GIVE_UP_MS) throw new AbandonedCommand();
      try {
        await appendJobEvent(this.deps.js, "render", retainedAcceptance(command.accepted), 0);
      } catch (err) {
        if (!isWrongLastSequence(err)) throw err;
      }
      job = foldJob(await readJobEvents(this.deps.jsm, command.jobId));
    }
    if (!job) throw new AppError("INTERNAL_ERROR", "render command without an accepted job", "");
    return job;
  }

  private async process(command: jobEventsV1.RenderCommand, attempt: number, storedAtMs: number): Promise<void> {
    const job = await this.loadJob(command, storedAtMs);
    if (isTerminal(job.status)) throw new StaleJob();
    const accepted = command.accepted?.accepted;
    if (!accepted) throw new AppError("INTERNAL_ERROR", "render command without its acceptance", "");

    // The render does not wait for job.started's acknowledgement; nothing is
    // stored or announced before it is in, so a job another delivery took
    // meanwhile only costs this render.
    const startedSeq = appendJobEvent(
      this.deps.js,
      "render",
      jobEvent("job.started", { jobId: job.id, keyId: job.keyId, source: "render", started: { worker: this.deps.workerName, attempt } }),
      job.lastSeqOf.render,
    ).then(
      (ack) => ack.seq,
      (err: unknown) => Promise.reject(isWrongLastSequence(err) ? new StaleJob() : err),
    );
    // Awaited below; until then a refusal must not count as unhandled.
    startedSeq.catch(() => undefined);

    // The page is wiped for its next job only once this one is stored and announced.
    let jobDone!: () => void;
    const holdPageUntil = new Promise<void>((resolve) => (jobDone = resolve));
    try {
      const rendered = await this.render(job, accepted, holdPageUntil).catch(async (err: unknown) => {
        // A job that is not ours fails nowhere; otherwise the render's error stands.
        await startedSeq;
        throw err;
      });
      await this.succeed(job, accepted, rendered, await startedSeq, outcomeInboxOf(command));
    } finally {
      jobDone();
    }
  }

  /**
   * Renders the job's source (or each of its documents, merged in order), then applies the
   * post-processing its options ask for; the whole job, post-processing included, within one
   * render deadline.
   */
  private async render(job: JobState, accepted: jobEventsV1.JobAccepted, holdPageUntil: Promise<void>): Promise<{ output: RenderOutput; renderMs: number }> {
    const started = performance.now();
    const deadlineAt = started + this.deps.deadlineMs;
    const printed =
      accepted.documents.length > 0 ? await this.renderDocuments(job, accepted.documents, deadlineAt) : await this.renderOne(job, accepted, { holdPageUntil });
    const steps = postProcessingOf(optionsOfContract(accepted.options));
    const output =
      printed.contentType === "application/pdf" && wantsPostProcessing(steps)
        ? { ...printed, data: await postProcess(printed.data, steps, deadlineAt) }
        : printed;
    if (output.data.byteLength > this.deps.maxOutputBytes) throw outputCap(this.deps.maxOutputBytes);
    return { output, renderMs: Math.round(performance.now() - started) };
  }

  /** Renders one document in a window only its key's jobs use (see the engine's README). */
  private async renderOne(job: JobState, accepted: jobEventsV1.JobAccepted, call: RenderCallOptions, deadlineAt?: number): Promise<RenderOutput> {
    const renderJob = withinDeadline(await this.buildRenderJob(accepted, job.keyId), deadlineAt);
    const started = performance.now();
    const outputLabel = renderJob.kind === "pdf" ? "pdf" : (renderJob.options?.imageFormat ?? "png");
    return withSpan("render", { attributes: { "pressroom.job.id": job.id, "pressroom.render.kind": renderJob.kind } }, () =>
      this.deps.engine.render(renderJob, call),
    ).then(
      (rendered) => {
        renderMetrics.rendered(outputLabel, started, { bytes: rendered.data.byteLength, pages: rendered.pages });
        return rendered;
      },
      (err: unknown) => {
        renderMetrics.rendered(outputLabel, started, { reason: err instanceof RenderFailure ? err.reason : "error" });
        throw err;
      },
    );
  }

  /**
   * A merged PDF: each part rendered in its own page, one after the other, within what is left
   * of the job's deadline, then their pages joined in order. A part that fails fails the job,
   * its error naming the part's index.
   */
  private async renderDocuments(job: JobState, parts: jobEventsV1.DocumentPart[], deadlineAt: number): Promise<RenderOutput> {
    const printed: RenderOutput[] = [];
    for (const [index, part] of parts.entries()) {
      const accepted = jobEventsV1.JobAccepted.fromPartial({ ...part, kind: jobEventsV1.JobKind.JOB_KIND_RENDER });
      printed.push(await this.renderOne(job, accepted, {}, deadlineAt).catch((err: unknown) => Promise.reject(namingPart(err, index))));
    }
    const data = await merge(
      printed.map((p) => p.data),
      Math.max(1, Math.floor(deadlineAt - performance.now())),
    );
    return {
      data,
      contentType: "application/pdf",
      pages: printed.reduce((sum, p) => sum + p.pages, 0),
      renderMs: printed.reduce((sum, p) => sum + p.renderMs, 0),
    };
  }

  /** Stores the output, appends job.succeeded after render's `lastSeq`, and announces it on the waiting gateway's `inbox`. */
  private async succeed(
    job: JobState,
    accepted: jobEventsV1.JobAccepted,
    { output, renderMs }: { output: RenderOutput; renderMs: number },
    lastSeq: number,
    inbox: string,
  ): Promise<void> {
    const extension = outputLabelOf(output.contentType);
    const filename = downloadName(accepted.options?.filename, `${accepted.templateId || "document"}-${job.id}`, extension);
    const stored = await storeOutput(
      { storage: this.deps.storage, js: this.deps.js, bucket: this.deps.outputBucket },
      {
        outputId: "",
        contentType: output.contentType,
        filename,
        jobId: job.id,
        keyId: job.keyId,
        attachment: Boolean(accepted.options?.filename),
      },
      output.data,
    );
    const succeeded = jobEvent("job.succeeded", {
      jobId: job.id,
      keyId: job.keyId,
      source: "render",
      succeeded: {
        outputId: stored.outputId,
        url: stored.url,
        expiresAt: stored.expiresAt,
        contentType: stored.contentType,
        sizeBytes: stored.sizeBytes,
        pages: output.pages,
        renderMs,
        callback: Boolean(accepted.webhookUrl),
      },
    });
    try {
      await appendJobEvent(this.deps.js, "render", succeeded, lastSeq);
    } catch (err) {
      if (isWrongLastSequence(err)) throw new StaleJob();
      throw err;
    }
    announceOutcome(this.deps.nc, inbox, succeeded, this.announcedOutput(accepted, filename, output.data));
    renderMetrics.jobSucceeded(extension);
    this.deps.logger.info({ jobId: job.id, renderMs, pages: output.pages, bytes: output.data.byteLength }, "job succeeded");
  }

  /**
   * The output to announce with the outcome: only a sync job's (a gateway
   * waits for it; a webhook job's caller does not), and only up to the
   * configured size and what the NATS server accepts in one message.
   */
  private announcedOutput(accepted: jobEventsV1.JobAccepted, filename: string, data: Uint8Array): AnnouncedOutput | undefined {
    if (accepted.webhookUrl || this.deps.announcedOutputMaxBytes === 0) return undefined;
    const serverMax = (this.deps.nc.info?.max_payload ?? 0) - ANNOUNCEMENT_OVERHEAD_BYTES;
    const attachment = Boolean(accepted.options?.filename);
    return data.byteLength <= Math.min(this.deps.announcedOutputMaxBytes, serverMax) ? { filename, data, attachment } : undefined;
  }

  /**
   * The job the engine renders: the template (exactly the version the job was admitted with,
   * of its owner, "" the public catalog, even if deleted since) or raw HTML expanded off the
   * event loop, or a url's page fetched through the network guard; the header and footer
   * filled with the same data; the request's options over the template's settings (engineJob).
   * The render gets what is left of the deadline.
   */
  private async buildRenderJob(accepted: jobEventsV1.JobAccepted, keyId: string): Promise<RenderJob> {
    const started = performance.now();
    const { deadlineMs, expander } = this.deps;
    const left = () => Math.max(1, Math.floor(deadlineMs - (performance.now() - started)));
    const options = optionsOfContract(accepted.options);
    const expand = (source: string, cacheKey?: string) => expander.expand({ source, cacheKey, dataJson: accepted.dataJson, timeoutMs: deadlineMs });
    const [headerHtml, footerHtml] = await Promise.all([options.headerHtml, options.footerHtml].map((text) => (text === undefined ? undefined : expand(text))));
    const filled = { ...options, headerHtml, footerHtml };
    const timing = { jobDeadlineMs: deadlineMs };
    if (accepted.templateId) {
      const row = await this.deps.catalog.get(accepted.templateId, accepted.templateVersion, accepted.templateOwner, accepted.templateGeneration);
      const [html, assets] = await Promise.all([expand(row.body, templateKey(row)), this.deps.catalog.assets(row)]);
      renderMetrics.templateExpanded(started);
      return { ...engineJob(row, { html, kind: row.output, options: filled, keyId, assets }), ...timing, deadlineMs: left() };
    }
    const kind = accepted.kind === jobEventsV1.JobKind.JOB_KIND_IMAGE ? "png" : "pdf";
    const html = accepted.url
      ? await this.deps.engine.fetchPage(accepted.url, { timeoutMs: left() })
      : await expand(accepted.html).finally(() => renderMetrics.templateExpanded(started));
    return { ...engineJob(undefined, { html, kind, options: filled, keyId }), ...timing, deadlineMs: left() };
  }

  private async fail(command: jobEventsV1.RenderCommand, err: unknown): Promise<void> {
    const failed = failureOf(err);
    if (failed.refund) this.deps.logger.error({ err, jobId: command.jobId }, "job failed on our side");
    const job = foldJob(await readJobEvents(this.deps.jsm, command.jobId));
    if (!job || isTerminal(job.status)) return;
    const event = jobEvent("job.failed", { jobId: job.id, keyId: job.keyId, source: "render", failed: { ...failed, callback: Boolean(job.webhookUrl) } });
    try {
      await appendJobEvent(this.deps.js, "render", event, job.lastSeqOf.render);
      announceOutcome(this.deps.nc, outcomeInboxOf(command), event);
      renderMetrics.jobFailed(failed.code);
    } catch (appendErr) {
      if (!isWrongLastSequence(appendErr)) throw appendErr;
    }
  }
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

/**
 * How a job that could not be rendered ends (on its last attempt, or at once
 * when retrying cannot help). A document fault (a limit it hit, a template
 * error, its own page's renderer crashing or window closing while the
 * browser stayed up, its page lost together with others on every attempt) is
 * the customer's: RENDER_FAILED, charged. Anything else (the browser died, no
 * browser, shutting down, a dependency down, attempts that died) is ours:
 * INTERNAL_ERROR, refunded.
 */
export function failureOf(err: unknown): jobEventsV1.JobFailed {
  const documentFault = (err instanceof RenderFailure && err.reason !== "crashed") || (err instanceof AppError && err.code === "RENDER_FAILED");
  return documentFault
    ? { code: "RENDER_FAILED", message: (err as Error).message, refund: false }
    : { code: "INTERNAL_ERROR", message: "the render failed on our side", refund: true };
}

/** Whether another attempt may succeed: our failures, and a page lost with others (which may be ours or the document's). */
export function worthRetrying(err: unknown): boolean {
  return failureOf(err).code !== "RENDER_FAILED" || (err instanceof RenderFailure && err.retryable);
}

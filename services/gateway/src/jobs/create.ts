import type { meteringV1, renderV1 } from "@pressroom/contracts";
import { AppError, newId, type z } from "@pressroom/platform";
import { isTerminal, loadJob, type JobOutcome, type SealingRecipients } from "@pressroom/domain";
import type { Context } from "koa";
import { admissionKindOf, admit, releaseAdmitted, slotWaitSeconds, throwIfNotAdmitted, throwIfRateLimited, waitForSlot } from "../access/admission";
import type { Authenticator, Principal } from "../access/auth";
import { idempotencyOf, markReplayed, recordResponse, replayOf, sendRecorded, throwIfKeyReused, type RecordDeps } from "../access/idempotency";
import { readJsonObject } from "../body";
import { errors } from "../errors";
import { keepAnnouncedOutput, sendOutput, signedOutputOf, type OutputSource } from "../output-delivery";
import { checkTemplateData, type TemplateDirectory, type TemplateInfo } from "../template-directory";
import type { CustomerSchemas } from "../schemas/schemas";
import type { HtmlSource } from "../schemas/schema-thread";
import { jobMetrics } from "./metrics";
import type { OutcomeInbox } from "./job-watch";
import { submitJob, type JobBus } from "./submit";
import { htmlSources, validateJobRequest, type JobKind, type JobPart, type JobRequest } from "./request";
import { validateScreenshotRequest } from "./screenshot";
import { outputTtlBeyondPlan } from "./option-parts";
import { RenderSucceeded, type JobAccepted } from "./api";
import { webhookAddressProblem } from "./webhook-address";
import { failedError } from "./failures";
import { withTemplateOptions } from "../template-options";

/** The header that names the job of an answer made after admission. */
const JOB_ID_HEADER = "Pressroom-Job-Id";

/** What POST /v1/render and /v1/image use. */
export interface JobDeps extends OutputSource, RecordDeps {
  auth: Authenticator;
  templates: TemplateDirectory;
  /** Where own templates' data schemas run, after the rate limit. */
  schemas: CustomerSchemas;
  bus: JobBus;
  /** Render's and the webhook service's public sealing keys: a job's secrets are sealed to them before they are published (see sealJobSecrets). */
  sealTo: SealingRecipients;
  /** Where this process waits for the outcomes of the sync jobs it submits. */
  outcomes: OutcomeInbox;
  syncWaitMs: number;
  maxBodyBytes: number;
  /** A webhook_url on a loopback address is accepted (development and tests only). */
  allowLoopbackWebhooks: boolean;
}

/** The sync success body of DESIGN.md. */
export function succeededBody(job: JobOutcome) {
  return {
    id: job.id,
    status: "succeeded" as const,
    url: job.result!.url,
    expires_at: job.result!.expiresAt,
    content_type: RenderSucceeded.shape.content_type.parse(job.result!.contentType),
    size_bytes: Number(job.result!.sizeBytes),
  } satisfies z.input<typeof RenderSucceeded>;
}

/** An own template's data, to check against its customer's schema once the request has passed the rate limit. */
export interface OwnData {
  template: renderV1.Template;
  data: Record<string, unknown>;
  /** The request's field naming the template ("template_id", "documents[1].template_id"). */
  field: string;
}

interface CheckedRequest {
  request?: JobRequest;
  template?: TemplateInfo;
  idempotency?: meteringV1.Idempotency;
  /** Own templates' data, checked after the rate limit (a customer's schema runs only for a request the key may make). */
  ownData?: OwnData[];
  problem?: unknown;
}

/**
 * Everything about a request that is checked before quota and concurrency:
 * the body, then the template (exists, right kind, data matches a public
 * template's schema; an own template's data is left for after the rate
 * limit). A failure is returned, not thrown, so that the rate limit is
 * answered first; a failure to reach the catalog is returned the same way.
 */
async function checkRequest(deps: JobDeps, kind: JobKind, ctx: Context, principal: Principal): Promise<CheckedRequest> {
  let body: Record<string, unknown>;
  try {
    body = await readJsonObject(ctx, deps.maxBodyBytes);
  } catch (err) {
    return { problem: err };
  }
  const idempotency = idempotencyOf(ctx, body);
  if (idempotency instanceof AppError) return { problem: idempotency };
  return { ...(await checkJobBody(deps, kind, body, principal)), idempotency };
}

/** A render, image or screenshot request's body (of its route, or a batch's item) and its template, as checkRequest checks them. */
export async function checkJobBody(
  deps: Pick<JobDeps, "templates">,
  kind: JobKind,
  body: Record<string, unknown>,
  principal: Principal,
): Promise<Omit<CheckedRequest, "idempotency">> {
  const request = kind === "screenshot" ? validateScreenshotRequest(body) : validateJobRequest(kind, body);
  if (request instanceof AppError) return { problem: request };
  const lifetime = outputTtlBeyondPlan(request.options?.outputTtlSeconds, principal.plan);
  if (lifetime) return { problem: lifetime };
  if (request.documents) {
    const { parts, ownData, problem } = await checkParts(deps, principal, request.documents);
    return parts ? { request: { ...request, documents: parts }, ownData } : { problem };
  }
  if (!request.templateId) return { request };
  const checked = await checkTemplate(
    deps,
    principal,
    kind,
    { templateId: request.templateId, version: request.templateVersion, data: request.data },
    "template_id",
  );
  if (checked.problem !== undefined) return { problem: checked.problem };
  // A screenshot has no template; a render's or an image's takes the options its template version was saved with under its own.
  const merged = kind === "screenshot" ? undefined : withTemplateOptions(kind, body, checked.template!.template, principal.plan);
  if (merged instanceof AppError) return { problem: merged };
  return { request: merged ?? request, template: checked.template, ownData: checked.ownData && [checked.ownData] };
}

/**
 * Raw HTML's Handlebars, checked on the schema threads once the request has passed the rate limit: the first source that
 * does not compile, as a 422 naming its field; a check past its budget leaves the sources to the renderer.
 */
export async function checkHandlebars(deps: Pick<JobDeps, "schemas" | "logger">, sources: HtmlSource[]): Promise<AppError | undefined> {
  const { problem, unchecked } = await deps.schemas.handlebars(sources);
  if (unchecked) deps.logger.info({ reason: unchecked }, "raw HTML's Handlebars was not checked within its budget: the renderer checks it");
  return problem;
}

/** Whether a request has checks that wait for the rate limit (a thread's or a look-up's work): see laterProblem. */
function hasLaterChecks(request: JobRequest, ownData: OwnData[] | undefined): boolean {
  return Boolean(ownData?.length) || htmlSources(request).length > 0 || request.webhookUrl !== undefined;
}

/** What is checked once the request has passed the rate limit: raw HTML's Handlebars, the webhook_url's address, own templates' data. */
async function laterProblem(deps: JobDeps, request: JobRequest, ownData: OwnData[] | undefined): Promise<AppError | undefined> {
  return (
    (await checkHandlebars(deps, htmlSources(request))) ??
    (request.webhookUrl === undefined ? undefined : await webhookAddressProblem(request.webhookUrl, deps.allowLoopbackWebhooks)) ??
    (ownData?.length ? await checkOwnData(deps, ownData) : undefined)
  );
}

/** Own templates' data against their customers' schemas (on the schema threads), the first failure naming its part. */
export async function checkOwnData(deps: Pick<JobDeps, "schemas">, ownData: OwnData[]): Promise<AppError | undefined> {
  for (const { template, data, field } of ownData) {
    const problem = await deps.schemas.validate(template, data);
    if (!problem) continue;
    const part = /^documents\[\d+\]/.exec(field)?.[0];
    return part ? new AppError(problem.code, `${part}: ${problem.message}`, problem.hint) : problem;
  }
  return undefined;
}

/** A request's template: it exists, makes what the route makes, and the data matches its schema. */
async function checkTemplate(
  deps: Pick<JobDeps, "templates">,
  principal: Principal,
  kind: JobKind,
  { templateId, version, data }: { templateId: string; version: number | undefined; data: Record<string, unknown> },
  field: string,
): Promise<{ template?: TemplateInfo; ownData?: OwnData; problem?: unknown }> {
  let template: TemplateInfo;
  try {
    template = await deps.templates.resolve(templateId, principal.keyId, version);
  } catch (err) {
    return { problem: err };
  }
  const output = template.template.image ? "png" : "pdf";
  if (kind === "render" && output === "png") {
    return { problem: errors.payload(`${field}: "${templateId}" makes a PNG image`, "Use POST /v1/image for image templates.") };
  }
  if (kind === "image" && output === "pdf") {
    return { problem: errors.payload(`${field}: "${templateId}" makes a PDF document`, "Use POST /v1/render for document templates.") };
  }
  if (template.template.owner) return { template, ownData: { template: template.template, data, field } };
  const dataProblem = checkTemplateData(template, data);
  return dataProblem ? { problem: dataProblem } : { template };
}

/**
 * Every template part of a merged document, checked as a template_id is, its failure naming the
 * part; the parts are returned with the owner, generation and version of their template as admitted.
 */
async function checkParts(
  deps: Pick<JobDeps, "templates">,
  principal: Principal,
  parts: JobPart[],
): Promise<{ parts?: JobPart[]; ownData?: OwnData[]; problem?: unknown }> {
  const checked: JobPart[] = [];
  const ownData: OwnData[] = [];
  for (const [index, part] of parts.entries()) {
    if (!part.templateId) {
      checked.push(part);
      continue;
    }
    const {
      template,
      ownData: own,
      problem,
    } = await checkTemplate(
      deps,
      principal,
      "render",
      { templateId: part.templateId, version: part.templateVersion, data: part.data },
      `documents[${index}].template_id`,
    );
    if (problem instanceof AppError) {
      const message = problem.message.startsWith(`documents[${index}]`) ? problem.message : `documents[${index}]: ${problem.message}`;
      return { problem: new AppError(problem.code, message, problem.hint, problem.details) };
    }
    if (problem !== undefined || !template) return { problem: problem ?? errors.internal() };
    if (own) ownData.push(own);
    const { generation, version, owner } = template.template;
    checked.push({ ...part, templateGeneration: generation, templateVersion: version, templateOwner: owner });
  }
  return { parts: checked, ownData };
}

/** The job's outcome if it has ended, else waits for it up to `timeoutMs`. */
async function outcomeOf(deps: JobDeps, jobId: string, timeoutMs: number): Promise<JobOutcome | undefined> {
  const watch = deps.outcomes.watch(jobId);
  const now = await loadJob(deps.bus.jsm, jobId).catch(() => undefined);
  if (now && isTerminal(now.status)) {
    watch.close();
    return now;
  }
  return watch.wait(timeoutMs);
}

/** Whether the request is answered 202 at once: it has a webhook_url, or asked for async. */
function inBackground(request: JobRequest): boolean {
  return request.webhookUrl !== undefined || request.async === true;
}

function answerQueued(ctx: Context, jobId: string): void {
  ctx.status = 202;
  ctx.set("Location", `/v1/jobs/${jobId}`);
  ctx.body = { id: jobId, status: "queued" } satisfies z.input<typeof JobAccepted>;
}

/**
 * Whether a sync request's Accept header prefers the job's document, of its own content type (an
 * image's is its options.format), to JSON. JSON stays the default: for a wildcard, and for
 * another document type than the job made (Accept: image/png for a jpeg).
 */
function documentWanted(ctx: Context, contentType: string): boolean {
  return ctx.accepts("application/json", contentType) === contentType;
}

/**
 * The answer of a succeeded sync job: its JSON, or, when the request's
 * Accept header asks for the document, the document itself with what the
 * JSON would have said in headers. The JSON is what an Idempotency-Key
 * records either way (ctx.state.recordedBody).
 */
async function answerSucceeded(deps: JobDeps, ctx: Context, body: ReturnType<typeof succeededBody>): Promise<void> {
  const signed = documentWanted(ctx, body.content_type) ? signedOutputOf(body.url) : undefined;
  if (!signed) {
    ctx.status = 200;
    ctx.body = body;
    return;
  }
  ctx.state.recordedBody = body;
  await sendOutput(deps, ctx, signed);
  ctx.set(JOB_ID_HEADER, body.id);
  ctx.set("Content-Location", body.url);
  ctx.set("Pressroom-Expires-At", body.expires_at);
}

async function answerOutcome(deps: JobDeps, ctx: Context, job: JobOutcome): Promise<void> {
  if (job.status === "failed") throw failedError(job);
  keepAnnouncedOutput(deps, job);
  await answerSucceeded(deps, ctx, succeededBody(job));
}

/** A replay: the recorded response, or while the first request runs, the job's own answer. */
async function replayJob(deps: JobDeps, ctx: Context, request: JobRequest, record: meteringV1.IdempotentRecord): Promise<void> {
  const recorded = record.status === 200 && !inBackground(request) ? (JSON.parse(record.bodyJson) as ReturnType<typeof succeededBody>) : undefined;
  if (recorded && documentWanted(ctx, recorded.content_type)) {
    markReplayed(ctx);
    return answerSucceeded(deps, ctx, recorded);
  }
  if (record.status !== 0) return sendRecorded(ctx, record);
  markReplayed(ctx);
  const job = inBackground(request) ? undefined : await outcomeOf(deps, record.jobId, deps.syncWaitMs);
  if (job) await answerOutcome(deps, ctx, job);
  else answerQueued(ctx, record.jobId);
}

/** Submits an admitted job and answers; `final` is false for a sync job still running after the wait. */
async function runJob(
  deps: JobDeps,
  ctx: Context,
  kind: JobKind,
  principal: Principal,
  request: JobRequest,
  template: TemplateInfo | undefined,
  jobId: string,
): Promise<{ final: boolean }> {
  const watch = inBackground(request) ? undefined : deps.outcomes.watch(jobId);
  try {
    await submitJob(deps.bus, {
      sealTo: deps.sealTo,
      jobId,
      keyId: principal.keyId,
      plan: principal.plan,
      request,
      templateGeneration: template?.template.generation ?? 0,
      templateVersion: template?.template.version ?? 0,
      templateOwner: template?.template.owner ?? "",
      outcomeInbox: deps.outcomes.id,
    });
  } catch (err) {
    watch?.close();
    await releaseAdmitted(deps.metering, jobId, deps.logger);
    throw err;
  }
  jobMetrics.accepted(kind, watch !== undefined);
  if (!watch) {
    answerQueued(ctx, jobId);
    return { final: true };
  }
  const job = await watch.wait(deps.syncWaitMs);
  if (!job) {
    jobMetrics.syncFallback(kind);
    answerQueued(ctx, jobId);
    return { final: false };
  }
  await answerOutcome(deps, ctx, job);
  return { final: true };
}

/** POST /v1/render, /v1/image and /v1/screenshot: one code path, sync being an async job waited on. */
export function jobHandler(deps: JobDeps, kind: JobKind) {
  return async (ctx: Context): Promise<void> => {
    const principal = await deps.auth.authenticate(ctx);
    const { request, template, idempotency, ownData, problem } = await checkRequest(deps, kind, ctx, principal);
    const jobId = newId("job");
    const units = request?.documents?.length ?? 1;
    const admission = admissionKindOf(request?.test);
    let decision: meteringV1.AdmitResponse;
    if (problem === undefined && request && hasLaterChecks(request, ownData)) {
      // A customer's schema, raw HTML's Handlebars and the webhook_url's look-up run only once the request has passed the
      // rate limit; then quota and slot, not counted again.
      throwIfRateLimited(await admit(ctx, deps.metering, principal), principal.plan);
      const later = await laterProblem(deps, request, ownData);
      if (later) throw later;
      decision = await admit(ctx, deps.metering, principal, jobId, idempotency, units, true, admission);
    } else {
      const valid = problem === undefined && request !== undefined;
      decision = await admit(ctx, deps.metering, principal, valid ? jobId : "", valid ? idempotency : undefined, units, false, admission);
    }
    throwIfRateLimited(decision, principal.plan);
    if (problem !== undefined) throw problem;
    if (!request) throw errors.internal();
    throwIfKeyReused(decision);
    const replay = replayOf(decision);
    if (replay) {
      if (replay.jobId) ctx.set(JOB_ID_HEADER, replay.jobId);
      return replayJob(deps, ctx, request, replay);
    }
    decision = await waitForSlot(ctx, decision, slotWaitSeconds(ctx), () => admit(ctx, deps.metering, principal, jobId, idempotency, units, true, admission));
    throwIfNotAdmitted(decision, principal.plan, request.test === true);
    // Every answer from here on, an error's included, names the job it is about.
    ctx.set(JOB_ID_HEADER, jobId);
    const run = () => runJob(deps, ctx, kind, principal, request, template, jobId);
    if (idempotency) await recordResponse(deps, ctx, principal, idempotency.key, run);
    else await run();
  };
}

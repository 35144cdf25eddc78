import { jobEventsV1, meteringV1 } from "@pressroom/contracts";
import { AppError, call, newId, type z } from "@pressroom/platform";
import { isTerminal, loadJob, type JobState } from "@pressroom/domain";
import type { Context } from "koa";
import { admit, keyed, throwIfRateLimited } from "../access/admission";
import type { Principal } from "../access/auth";
import { idempotencyOf, markReplayed, recordResponse } from "../access/idempotency";
import { bodyProblem, readJsonObject } from "../body";
import { errors } from "../errors";
import { MAX_BATCH_BODY_BYTES } from "../limits";
import { readQuery } from "../query";
import { BatchItemsQuery, BatchRequest, type Batch, type BatchItemList } from "./batch-api";
import { checkHandlebars, checkJobBody, checkOwnData, type JobDeps, type OwnData } from "./create";
import { appendAcceptance, renderCommandOf } from "./submit";
import { htmlSources, type JobKind } from "./request";
import { liveOutputs } from "./view";
import type { JobEvent } from "@pressroom/domain";

/** What the batch routes use: a job's dependencies (its checks, the bus) without the sync wait. */
export type BatchDeps = Pick<JobDeps, "auth" | "metering" | "logger" | "templates" | "schemas" | "bus" | "sealTo" | "storage">;

const BATCH_ID = /^bat_[0-9a-z]{26}$/;
/** How many items' acceptances are appended at once. */
const APPEND_CONCURRENCY = 32;

const FIELD_FIRST = /^[a-z_][\w.[\]]*: /;

/**
 * An item's failure as the batch's 422: "template_id: must match …" → "items[3].template_id: must match …", a
 * message about the whole item → "items[3]: …"; an item's template that does not exist names items[i].template_id.
 */
function itemProblem(index: number, problem: unknown): unknown {
  if (!(problem instanceof AppError) || (problem.code !== "PAYLOAD_INVALID" && problem.code !== "TEMPLATE_NOT_FOUND")) return problem;
  const at = `items[${index}]`;
  if (FIELD_FIRST.test(problem.message)) return errors.payload(`${at}.${problem.message}`, problem.hint);
  if (problem.code === "TEMPLATE_NOT_FOUND") return errors.payload(`${at}.template_id: ${problem.message}`, problem.hint);
  return errors.payload(`${at}: ${problem.message}`, problem.hint);
}

interface CheckedItem {
  kind: JobKind;
  checked: Awaited<ReturnType<typeof checkJobBody>>;
}

/**
 * Every item checked as its own operation checks it (an item's webhook_url refused: the batch calls back once; all
 * items' Handlebars in one check); the first failure names its item.
 */
async function checkItems(deps: BatchDeps, principal: Principal, items: Record<string, unknown>[]): Promise<CheckedItem[]> {
  const checkedItems: CheckedItem[] = [];
  const ownData: OwnData[] = [];
  for (const [index, item] of items.entries()) {
    const { kind = "render", ...body } = item as { kind?: unknown } & Record<string, unknown>;
    if (kind !== "render" && kind !== "image")
      throw errors.payload(`items[${index}].kind: must be "render" or "image"`, "Send kind render (the default) or image.");
    if (body.webhook_url !== undefined) {
      throw errors.payload(
        `items[${index}].webhook_url: an item has no callback of its own`,
        "Give the batch a webhook_url (one batch.completed callback when every item has ended), or poll GET /v1/batches/{id}; each item is a job (GET /v1/jobs/{id}).",
      );
    }
    if (body.test !== undefined) {
      throw errors.payload(
        `items[${index}].test: a batch has no test mode (its items count against the monthly renders)`,
        'Send test-mode documents one by one: POST /v1/render or /v1/image with "test": true.',
      );
    }
    const checked = await checkJobBody(deps, kind, body, principal);
    if (checked.problem !== undefined || !checked.request) throw itemProblem(index, checked.problem ?? errors.internal());
    for (const own of checked.ownData ?? []) ownData.push({ ...own, field: `items[${index}].${own.field}` });
    checkedItems.push({ kind, checked });
  }
  const sources = checkedItems.flatMap(({ checked }, index) =>
    htmlSources(checked.request!).map(({ field, html }) => ({ field: `items[${index}].${field}`, html })),
  );
  const sourceProblem = await checkHandlebars(deps, sources);
  if (sourceProblem) throw sourceProblem;
  for (const own of ownData) {
    const problem = await checkOwnData(deps, [own]);
    if (problem) {
      const index = /^items\[(\d+)\]/.exec(own.field)![1]!;
      throw itemProblem(Number(index), problem);
    }
  }
  return checkedItems;
}

/** The batch object of the API. */
function batchBody(batch: meteringV1.Batch): z.input<typeof Batch> {
  const counts = batch.counts ?? { queued: 0, running: 0, succeeded: 0, failed: 0 };
  return {
    id: batch.id,
    status: batch.status as z.input<typeof Batch>["status"],
    total: batch.total,
    counts: { queued: counts.queued, running: counts.running, succeeded: counts.succeeded, failed: counts.failed },
    created_at: batch.createdAt,
    archive: batch.archive ? { url: batch.archive.url, expires_at: batch.archive.expiresAt, size_bytes: Number(batch.archive.sizeBytes) } : null,
  };
}

function answerAccepted(ctx: Context, batch: meteringV1.Batch): void {
  ctx.status = 202;
  ctx.set("Location", `/v1/batches/${batch.id}`);
  ctx.body = batchBody(batch);
}

/** Appends each item's acceptance (its job is visible as queued at once); one not appended is appended by the worker at dispatch. */
async function appendAcceptances(deps: BatchDeps, acceptances: JobEvent[]): Promise<void> {
  const queue = [...acceptances];
  const worker = async () => {
    for (let accepted = queue.shift(); accepted; accepted = queue.shift()) {
      const { jobId } = accepted;
      await appendAcceptance(deps.bus, accepted).catch((err: unknown) =>
        deps.logger.warn({ err, jobId }, "could not append a batch item's acceptance; the worker appends it at dispatch"),
      );
    }
  };
  await Promise.all(Array.from({ length: APPEND_CONCURRENCY }, worker));
}

/** POST /v1/batches, GET /v1/batches/{id}, GET /v1/batches/{id}/items, DELETE /v1/batches/{id}. */
export function batchRoutes(deps: BatchDeps) {
  const { metering } = deps;
  const notFound = (id: string) => new AppError("NOT_FOUND", `batch "${id}" not found`, "Use the id returned by POST /v1/batches with the same key.");
  const ownBatchId = (ctx: Context): string => {
    const id = ctx.params.id as string;
    if (!BATCH_ID.test(id)) throw notFound(id);
    return id;
  };
  const readBatch = async (principal: Principal, batchId: string): Promise<meteringV1.Batch> => {
    try {
      return (await call(metering, metering.getBatch, { keyId: principal.keyId, batchId })).batch!;
    } catch (err) {
      if (err instanceof AppError && err.code === "NOT_FOUND") throw notFound(batchId);
      throw err;
    }
  };

  return {
    create: async (ctx: Context): Promise<void> => {
      const principal = await deps.auth.authenticate(ctx);
      let body: Record<string, unknown> | undefined;
      let problem: unknown;
      try {
        body = await readJsonObject(ctx, MAX_BATCH_BODY_BYTES);
      } catch (err) {
        problem = err;
      }
      // The batch counts once against the rate limit, before its body is looked at.
      throwIfRateLimited(await admit(ctx, metering, principal));
      if (problem !== undefined || !body) throw problem ?? errors.internal();
      const idempotency = idempotencyOf(ctx, body);
      if (idempotency instanceof AppError) throw idempotency;
      const parsed = BatchRequest.safeParse(body);
      if (!parsed.success) throw bodyProblem(BatchRequest, body, parsed.error);
      const checked = await checkItems(deps, principal, parsed.data.items);
      const items = checked.map(({ checked: { request, template } }) => {
        const jobId = newId("job");
        const command = renderCommandOf({
          sealTo: deps.sealTo,
          jobId,
          keyId: principal.keyId,
          plan: principal.plan,
          request: request!,
          templateGeneration: template?.template.generation ?? 0,
          templateVersion: template?.template.version ?? 0,
          templateOwner: template?.template.owner ?? "",
          outcomeInbox: "",
        });
        const filename = request!.options?.filename ?? "";
        return { jobId, renderCommand: Buffer.from(jobEventsV1.RenderCommand.encode(command).finish()), accepted: command.accepted!, filename };
      });
      const decision = await call(metering, metering.createBatch, {
        keyId: principal.keyId,
        plan: principal.plan,
        batchId: newId("bat"),
        items: items.map(({ jobId, renderCommand, filename }) => ({ jobId, renderCommand, filename })),
        idempotency,
        webhookUrl: (parsed.data.webhook_url as string | undefined) ?? "",
        archive: parsed.data.archive ?? false,
      });
      if (decision.decision === meteringV1.Decision.DECISION_IDEMPOTENCY_KEY_REUSED) {
        throw new AppError(
          "IDEMPOTENCY_KEY_REUSED",
          "this Idempotency-Key was already used with a different request",
          "Use a new Idempotency-Key for a new request; retry a request only with exactly the body it was first sent with.",
        );
      }
      if (decision.decision === meteringV1.Decision.DECISION_QUOTA_EXCEEDED) {
        throw new AppError(
          "QUOTA_EXCEEDED",
          `the batch needs ${items.length} quota units and fewer are left this month; nothing was run`,
          "Send a smaller batch, upgrade your plan with POST /v1/billing/checkout, or wait for the next period (GET /v1/keys/usage).",
          { retryAfterSeconds: decision.retryAfterSeconds },
        );
      }
      if (decision.decision === meteringV1.Decision.DECISION_IDEMPOTENT_REPLAY) {
        markReplayed(ctx);
        answerAccepted(ctx, await readBatch(principal, decision.replay!.jobId));
        return;
      }
      if (decision.decision !== meteringV1.Decision.DECISION_ALLOWED || !decision.batch) throw errors.internal();
      const batch = decision.batch;
      const run = async () => {
        await appendAcceptances(
          deps,
          items.map((item) => item.accepted),
        );
        answerAccepted(ctx, batch);
        return { final: true };
      };
      if (idempotency) await recordResponse(deps, ctx, principal, idempotency.key, run);
      else await run();
    },

    view: async (ctx: Context): Promise<void> => {
      const principal = await keyed(deps, ctx);
      const batch = await readBatch(principal, ownBatchId(ctx));
      ctx.set("Cache-Control", "no-store");
      ctx.body = batchBody(batch);
    },

    items: async (ctx: Context): Promise<void> => {
      const principal = await keyed(deps, ctx);
      const batchId = ownBatchId(ctx);
      const query = readQuery(ctx, BatchItemsQuery, "See GET /v1/openapi.json for the parameters of GET /v1/batches/{id}/items.");
      if (query.cursor !== undefined && !/^\d{1,4}$/.test(query.cursor))
        throw errors.payload("cursor: must be a cursor this list answered", "Send back next_cursor as it was answered.");
      const afterIndex = query.cursor === undefined ? -1 : Number(query.cursor);
      let page: meteringV1.ListBatchItemsResponse;
      try {
        page = await call(metering, metering.listBatchItems, { keyId: principal.keyId, batchId, afterIndex, limit: query.limit ?? 20 });
      } catch (err) {
        if (err instanceof AppError && err.code === "NOT_FOUND") throw notFound(batchId);
        throw err;
      }
      // An ended item's url or error is its job's, read from its events; its url signed now while its output lives.
      const jobs = await Promise.all(
        page.items.map(async (item) => {
          if (item.status !== "succeeded" && item.status !== "failed") return undefined;
          const job = await loadJob(deps.bus.jsm, item.jobId);
          return job && isTerminal(job.status) ? job : undefined;
        }),
      );
      const live = await liveOutputs(
        deps.storage,
        principal.keyId,
        jobs.filter((job): job is JobState => job !== undefined),
      );
      const data = page.items.map((item, i) => {
        const entry: z.input<typeof BatchItemList>["data"][number] = { index: item.index, job_id: item.jobId, status: item.status as "queued" };
        const job = jobs[i];
        const output = job?.result?.outputId ? live.get(job.result.outputId) : undefined;
        if (output) entry.url = output.url;
        if (job?.error) entry.error = { code: job.error.code, message: job.error.message };
        return entry;
      });
      const last = page.items.at(-1);
      ctx.set("Cache-Control", "no-store");
      ctx.body = { data, next_cursor: page.more && last ? String(last.index) : null } satisfies z.input<typeof BatchItemList>;
    },

    cancel: async (ctx: Context): Promise<void> => {
      const principal = await keyed(deps, ctx);
      const batchId = ownBatchId(ctx);
      try {
        const { batch } = await call(metering, metering.cancelBatch, { keyId: principal.keyId, batchId });
        ctx.body = batchBody(batch!);
      } catch (err) {
        if (err instanceof AppError && err.code === "NOT_FOUND") throw notFound(batchId);
        throw err;
      }
    },
  };
}

import { meteringV1 } from "@pressroom/contracts";
import { AppError, unary } from "@pressroom/platform";
import { isPlanId } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { MeteringDb } from "../db";
import { cancelBatch, createBatch, listBatchItems, readBatch, type BatchView } from "./batches.repository";
import type { BatchEnds } from "./batch-ends";
import { publishCommand, type BatchDispatcher } from "./dispatcher";
import type { JetStreamClient } from "nats";

export interface BatchHandlerDeps {
  db: Kysely<MeteringDb>;
  js: JetStreamClient;
  dispatcher: Pick<BatchDispatcher, "kick">;
  ends: Pick<BatchEnds, "check">;
}

type BatchHandlers = Pick<meteringV1.MeteringServiceServer, "createBatch" | "getBatch" | "listBatchItems" | "cancelBatch">;

const MAX_ITEMS = 1000;

function toBatch(view: BatchView): meteringV1.Batch {
  return {
    id: view.id,
    status: view.status,
    total: view.total,
    counts: view.counts,
    createdAt: view.createdAt.toISOString(),
    archive: view.archive ? { url: view.archive.url, expiresAt: view.archive.expiresAt.toISOString(), sizeBytes: String(view.archive.sizeBytes) } : undefined,
  };
}

function notFound(): AppError {
  return new AppError("NOT_FOUND", "no such batch", "Check the batch id; a batch is visible only to the key that created it.");
}

/** Batches: admitted all or none, read, listed, cancelled (issue 42). */
export function batchHandlers(deps: BatchHandlerDeps): BatchHandlers {
  return {
    createBatch: unary(async (req: meteringV1.CreateBatchRequest) => {
      if (!isPlanId(req.plan)) throw new AppError("PLAN_INVALID", `unknown plan "${req.plan}"`, "Use one of demo, free, starter, pro, business.");
      if (req.items.length < 1 || req.items.length > MAX_ITEMS)
        throw new AppError("PAYLOAD_INVALID", `a batch has 1 to ${MAX_ITEMS} items`, "Split the batch.");
      const result = await createBatch(deps.db, {
        keyId: req.keyId,
        plan: req.plan,
        batchId: req.batchId,
        items: req.items.map((item) => ({ jobId: item.jobId, command: item.renderCommand, filename: item.filename })),
        idempotency: req.idempotency,
        webhookUrl: req.webhookUrl || undefined,
        archive: req.archive,
      });
      switch (result.decision) {
        case "allowed":
          deps.dispatcher.kick(req.keyId);
          return { decision: meteringV1.Decision.DECISION_ALLOWED, retryAfterSeconds: 0, replay: undefined, batch: toBatch(result.batch) };
        case "quota_exceeded":
          return { decision: meteringV1.Decision.DECISION_QUOTA_EXCEEDED, retryAfterSeconds: result.retryAfterSeconds, replay: undefined, batch: undefined };
        case "idempotent_replay":
          return { decision: meteringV1.Decision.DECISION_IDEMPOTENT_REPLAY, retryAfterSeconds: 0, replay: result.record, batch: undefined };
        case "idempotency_key_reused":
          return { decision: meteringV1.Decision.DECISION_IDEMPOTENCY_KEY_REUSED, retryAfterSeconds: 0, replay: undefined, batch: undefined };
      }
    }),
    getBatch: unary(async (req: meteringV1.GetBatchRequest) => {
      const view = await readBatch(deps.db, req.keyId, req.batchId);
      if (!view) throw notFound();
      return { batch: toBatch(view) };
    }),
    listBatchItems: unary(async (req: meteringV1.ListBatchItemsRequest) => {
      if (!(await readBatch(deps.db, req.keyId, req.batchId))) throw notFound();
      const limit = Math.min(Math.max(req.limit, 1), MAX_ITEMS);
      return listBatchItems(deps.db, { keyId: req.keyId, batchId: req.batchId, afterIndex: req.afterIndex, limit });
    }),
    cancelBatch: unary(async (req: meteringV1.CancelBatchRequest) => {
      const cancelled = await cancelBatch(deps.db, req.keyId, req.batchId, async (jobs) => {
        // Render ends each cancelled job: failed, CANCELLED, refunded.
        await Promise.all(jobs.map(({ jobId, command }) => publishCommand(deps.js, jobId, command, true)));
      });
      if (cancelled === undefined) throw notFound();
      // Nothing left running: the batch ended with its cancellation.
      await deps.ends.check(req.batchId);
      const view = await readBatch(deps.db, req.keyId, req.batchId);
      return { batch: toBatch(view!), cancelled };
    }),
  };
}

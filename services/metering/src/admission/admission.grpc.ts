import { meteringV1 } from "@pressroom/contracts";
import { AppError, unary, type Logger } from "@pressroom/platform";
import { isPlanId, planOf } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { MeteringDb } from "../db";
import { admitRequest, readUsage, releaseAdmission, setRendersUsed, type AdmissionKind, type UsageSnapshot } from "./admission.repository";
import { admitIdempotent, completeIdempotent, readIdempotent, type IdempotentAdmitResult } from "./idempotency.repository";
import { recordDecision } from "./metrics";

export interface AdmissionDeps {
  db: Kysely<MeteringDb>;
  logger: Logger;
  leaseSeconds: number;
  /** A preview's slot is reclaimed after this when the gateway that admitted it never released it. */
  previewLeaseSeconds: number;
  /** Frees the slots of the key's jobs that already finished (see finished-jobs.ts); returns how many it still holds. */
  settleFinishedJobs: (keyId: string) => Promise<number>;
  /** Records an operator's correction (account.usage_corrected). */
  onUsageCorrected: (input: { keyId: string; from: number; to: number; actor: string; periodStart: Date }) => Promise<void>;
}

type AdmissionHandlers = Pick<
  meteringV1.MeteringServiceServer,
  "admit" | "getUsage" | "setUsage" | "release" | "completeIdempotentRequest" | "getIdempotentRequest"
>;

const DECISIONS: Record<IdempotentAdmitResult["decision"], meteringV1.Decision> = {
  allowed: meteringV1.Decision.DECISION_ALLOWED,
  rate_limited: meteringV1.Decision.DECISION_RATE_LIMITED,
  quota_exceeded: meteringV1.Decision.DECISION_QUOTA_EXCEEDED,
  concurrency_exceeded: meteringV1.Decision.DECISION_CONCURRENCY_EXCEEDED,
  idempotent_replay: meteringV1.Decision.DECISION_IDEMPOTENT_REPLAY,
  idempotency_key_reused: meteringV1.Decision.DECISION_IDEMPOTENCY_KEY_REUSED,
};

/** What an admission's kind counts against (unspecified: a render). */
const KINDS: Partial<Record<meteringV1.AdmissionKind, AdmissionKind>> = {
  [meteringV1.AdmissionKind.ADMISSION_KIND_RENDER]: "render",
  [meteringV1.AdmissionKind.ADMISSION_KIND_PREVIEW]: "preview",
  [meteringV1.AdmissionKind.ADMISSION_KIND_TEST]: "test",
};

function checkIdempotencyKey(key: string): void {
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new AppError("PAYLOAD_INVALID", "idempotency key: 1 to 255 visible ASCII characters", "Pass the client's Idempotency-Key header.");
  }
}

function checkPlan(plan: string): void {
  if (!isPlanId(plan)) throw new AppError("PLAN_INVALID", `unknown plan "${plan}"`, "Use one of demo, free, starter, pro, business.");
}

function toUsage(snapshot: UsageSnapshot): meteringV1.Usage {
  return {
    plan: snapshot.plan,
    periodStart: snapshot.periodStart.toISOString(),
    periodEnd: snapshot.periodEnd.toISOString(),
    rendersUsed: String(snapshot.rendersUsed),
    rendersLimit: String(snapshot.rendersLimit),
    rendersRemaining: String(Math.max(0, snapshot.rendersLimit - snapshot.rendersUsed)),
    rate: { limit: snapshot.rateLimit, remaining: snapshot.rateRemaining, resetSeconds: snapshot.rateReset },
    concurrencyLimit: snapshot.concurrencyLimit,
    inFlight: snapshot.inFlight,
    previewsUsed: String(snapshot.previewsUsed),
    previewsLimit: String(snapshot.previewsLimit),
    previewsRemaining: String(Math.max(0, snapshot.previewsLimit - snapshot.previewsUsed)),
    testUsed: String(snapshot.testUsed),
    testLimit: String(snapshot.testLimit),
    testRemaining: String(Math.max(0, snapshot.testLimit - snapshot.testUsed)),
    testResetsAt: snapshot.dayEnd.toISOString(),
  };
}

/** Admission, usage and Idempotency-Key records: the MeteringService methods that are not billing's. */
export function admissionHandlers(deps: AdmissionDeps): AdmissionHandlers {
  const { logger } = deps;
  return {
    admit: unary(async (req: meteringV1.AdmitRequest) => {
      checkPlan(req.plan);
      const kind = KINDS[req.kind] ?? "render";
      const preview = kind === "preview";
      if (preview && !req.renderJobId) throw new AppError("PAYLOAD_INVALID", "a preview's admission needs its id", "Pass the preview's id as render_job_id.");
      const input = {
        keyId: req.keyId,
        plan: req.plan,
        renderJobId: req.renderJobId,
        leaseSeconds: preview ? deps.previewLeaseSeconds : deps.leaseSeconds,
        units: Math.max(1, req.units ?? 1),
        kind,
      };
      const idempotency = req.idempotency;
      if (idempotency) checkIdempotencyKey(idempotency.key);
      const decide = (counted: boolean): Promise<IdempotentAdmitResult> =>
        idempotency
          ? admitIdempotent(deps.db, { ...input, counted, idempotencyKey: idempotency.key, requestDigest: idempotency.requestDigest })
          : admitRequest(deps.db, { ...input, counted });
      let result = await decide(req.rateCounted);
      // Refused for a slot held by a job that has in fact finished: free it and decide once more (not counted again).
      if (result.decision === "concurrency_exceeded") {
        const stillHeld = await deps.settleFinishedJobs(req.keyId).catch((err: unknown) => {
          logger.warn({ err }, "could not settle finished jobs; the refusal stands");
          return Number.POSITIVE_INFINITY;
        });
        if (stillHeld < planOf(req.plan).concurrentRenders) result = await decide(true);
      }
      recordDecision(result.decision, req.renderJobId === "" ? "other" : kind);
      return {
        decision: DECISIONS[result.decision],
        rate: { limit: result.rateLimit, remaining: result.rateRemaining, resetSeconds: result.rateReset },
        retryAfterSeconds: result.retryAfter,
        replay: result.decision === "idempotent_replay" ? result.record : undefined,
      };
    }, logger),

    getUsage: unary(async (req: meteringV1.GetUsageRequest) => {
      checkPlan(req.plan);
      return { usage: toUsage(await readUsage(deps.db, req.keyId, req.plan)) };
    }, logger),

    setUsage: unary(async (req: meteringV1.SetUsageRequest) => {
      checkPlan(req.plan);
      const used = Number(req.rendersUsed);
      if (!Number.isInteger(used) || used < 0) throw new AppError("PAYLOAD_INVALID", "renders_used must be a non-negative integer", "Pass --used <n>.");
      const { previous, periodStart } = await setRendersUsed(deps.db, req.keyId, used);
      const usage = toUsage(await readUsage(deps.db, req.keyId, req.plan));
      await deps.onUsageCorrected({ keyId: req.keyId, from: previous, to: used, actor: req.actor || "operator", periodStart });
      return { usage, previousRendersUsed: String(previous) };
    }, logger),

    release: unary(async (req: meteringV1.ReleaseRequest) => {
      if (!req.jobId) throw new AppError("PAYLOAD_INVALID", "job_id is required", "Pass the job id that was admitted.");
      return releaseAdmission(deps.db, { jobId: req.jobId, refund: req.refund });
    }, logger),

    completeIdempotentRequest: unary(async (req: meteringV1.CompleteIdempotentRequestRequest) => {
      checkIdempotencyKey(req.idempotencyKey);
      await completeIdempotent(deps.db, { keyId: req.keyId, idempotencyKey: req.idempotencyKey, status: req.status, bodyJson: req.bodyJson });
      return {};
    }, logger),

    getIdempotentRequest: unary(async (req: meteringV1.GetIdempotentRequestRequest) => {
      checkIdempotencyKey(req.idempotencyKey);
      return { record: await readIdempotent(deps.db, req.keyId, req.idempotencyKey) };
    }, logger),
  };
}

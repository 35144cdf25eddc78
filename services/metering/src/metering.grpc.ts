import { meteringV1 } from "@pressroom/contracts";
import { AppError, isPlanId, planOf, unary, type Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import { admitRequest, readUsage, releaseAdmission, setRendersUsed, type Decision, type UsageSnapshot } from "./admission/admission.repository";
import { recordDecision } from "./admission/metrics";
import type { BillingService } from "./billing/billing.service";
import type { MeteringDb } from "./db";

export interface MeteringDeps {
  db: Kysely<MeteringDb>;
  logger: Logger;
  leaseSeconds: number;
  billing: BillingService;
  /** Frees the slots of the key's jobs that already finished (see events/finished-jobs.ts); returns how many it still holds. */
  settleFinishedJobs?: (keyId: string) => Promise<number>;
  onUsageCorrected: (input: { keyId: string; from: number; to: number; actor: string; periodStart: Date }) => Promise<void>;
}

const DECISIONS: Record<Decision, meteringV1.Decision> = {
  allowed: meteringV1.Decision.DECISION_ALLOWED,
  rate_limited: meteringV1.Decision.DECISION_RATE_LIMITED,
  quota_exceeded: meteringV1.Decision.DECISION_QUOTA_EXCEEDED,
  concurrency_exceeded: meteringV1.Decision.DECISION_CONCURRENCY_EXCEEDED,
};

function checkPlan(plan: string): void {
  if (!isPlanId(plan)) throw new AppError("PLAN_INVALID", `unknown plan "${plan}"`, "Use one of demo, free, starter, pro, business.");
}

export function toUsage(snapshot: UsageSnapshot): meteringV1.Usage {
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
  };
}

export function meteringService(deps: MeteringDeps): meteringV1.MeteringServiceServer {
  const { logger } = deps;
  return {
    admit: unary(async (req: meteringV1.AdmitRequest) => {
      checkPlan(req.plan);
      const input = { keyId: req.keyId, plan: req.plan, renderJobId: req.renderJobId, leaseSeconds: deps.leaseSeconds };
      let result = await admitRequest(deps.db, input);
      // Refused for a slot held by a job that has in fact finished: free it and decide once more (not counted again).
      if (result.decision === "concurrency_exceeded" && deps.settleFinishedJobs) {
        const stillHeld = await deps.settleFinishedJobs(req.keyId).catch((err: unknown) => {
          logger.warn({ err }, "could not settle finished jobs; the refusal stands");
          return Number.POSITIVE_INFINITY;
        });
        if (stillHeld < planOf(req.plan).concurrentRenders) result = await admitRequest(deps.db, { ...input, counted: true });
      }
      recordDecision(result.decision, req.renderJobId !== "");
      return {
        decision: DECISIONS[result.decision],
        rate: { limit: result.rateLimit, remaining: result.rateRemaining, resetSeconds: result.rateReset },
        retryAfterSeconds: result.retryAfter,
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

    createCheckout: unary((req: meteringV1.CreateCheckoutRequest) => deps.billing.createCheckout({ keyId: req.keyId, plan: req.plan }), logger),
    getCheckoutSession: unary((req: meteringV1.GetCheckoutSessionRequest) => deps.billing.getSession(req.sessionId), logger),
    confirmCheckout: unary((req: meteringV1.ConfirmCheckoutRequest) => deps.billing.confirm(req.sessionId, req.confirmToken), logger),
    handleStripeWebhook: unary((req: meteringV1.HandleStripeWebhookRequest) => deps.billing.handleStripeWebhook(req.payload, req.signature), logger),
  };
}

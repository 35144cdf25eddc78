import { meteringV1 } from "@pressroom/contracts";
import { AppError, call, type Logger } from "@pressroom/platform";
import { isPlanId, planOf } from "@pressroom/domain";
import type { Context } from "koa";
import type { Authenticator, Principal } from "./auth";

const { Decision } = meteringV1;

/**
 * Asks metering for this request: it takes a place in the key's rate
 * window (unless refused for rate, or `rateCounted`: an earlier Admit of the
 * same request took it) and, for a render (or, by `kind`, a preview: see
 * previews.ts) admitted, a quota unit and a concurrency slot. Sets the
 * RateLimit headers on every keyed response.
 */
export async function admit(
  ctx: Context,
  metering: meteringV1.MeteringServiceClient,
  principal: Principal,
  renderJobId = "",
  idempotency?: meteringV1.Idempotency,
  units = 1,
  rateCounted = false,
  kind = meteringV1.AdmissionKind.ADMISSION_KIND_RENDER,
): Promise<meteringV1.AdmitResponse> {
  const request = { keyId: principal.keyId, plan: principal.plan, renderJobId, idempotency, units, rateCounted, kind };
  const response = await call(metering, metering.admit, request);
  if (response.rate) {
    ctx.set("RateLimit-Limit", String(response.rate.limit));
    ctx.set("RateLimit-Remaining", String(response.rate.remaining));
    ctx.set("RateLimit-Reset", String(response.rate.resetSeconds));
  }
  return response;
}

/** What a keyed request needs: the key checked, then counted by metering. */
export interface KeyedDeps {
  auth: Authenticator;
  metering: meteringV1.MeteringServiceClient;
}

/** Authenticates and counts a keyed request that is not a render. */
export async function keyed(deps: KeyedDeps, ctx: Context): Promise<Principal> {
  const principal = await deps.auth.authenticate(ctx);
  throwIfRateLimited(await admit(ctx, deps.metering, principal), principal.plan);
  return principal;
}

/** How to get higher limits on a plan: the public demo key cannot be upgraded, its users get their own key. */
function moreRoom(plan: string): string {
  return plan === "demo" ? "get your own key with POST /v1/signup (the public demo key cannot be upgraded)" : "upgrade with POST /v1/billing/checkout";
}

/** The rate-limit part of a decision: thrown before anything else is checked. */
export function throwIfRateLimited(response: meteringV1.AdmitResponse, plan = ""): void {
  if (response.decision === Decision.DECISION_RATE_LIMITED) {
    throw new AppError(
      "RATE_LIMITED",
      "per-minute request limit exceeded",
      `Wait ${response.retryAfterSeconds} s (Retry-After) before the next request, or ${moreRoom(plan)}.`,
      { retryAfterSeconds: response.retryAfterSeconds },
    );
  }
}

/**
 * What a request's `test` field (jobs/request.ts TestMode) admits: a test job counts against the key's daily test
 * allowance (ADMISSION_KIND_TEST), anything else against its renders. Any route that makes a document passes its
 * request's `test` here and to throwIfNotAdmitted, and carries it in the job (JobAccepted.test, which render stamps).
 */
export function admissionKindOf(test: boolean | undefined): meteringV1.AdmissionKind {
  return test === true ? meteringV1.AdmissionKind.ADMISSION_KIND_TEST : meteringV1.AdmissionKind.ADMISSION_KIND_RENDER;
}

/** The 429 of a test job past the key's daily test allowance: when it starts again, and that renders without test still work. */
function testAllowanceExhausted(response: meteringV1.AdmitResponse, plan: string): AppError {
  const limit = isPlanId(plan) ? ` (${planOf(plan).testRendersPerDay} a day on the ${plan} plan)` : "";
  const resetsAt = new Date(Date.now() + response.retryAfterSeconds * 1000);
  resetsAt.setUTCMilliseconds(0);
  return new AppError(
    "QUOTA_EXCEEDED",
    "test mode's daily allowance exhausted",
    `Test mode's daily allowance${limit} is used up; it resets at 00:00 UTC (${resetsAt.toISOString().replace(".000Z", "Z")}, ` +
      `in ${response.retryAfterSeconds} s: Retry-After). test in GET /v1/keys/usage shows it. A request without "test" renders unstamped, ` +
      "against the monthly quota.",
    { retryAfterSeconds: response.retryAfterSeconds },
  );
}

/** Quota and concurrency, checked after the body and the template. `test`: the request was in test mode (admissionKindOf). */
export function throwIfNotAdmitted(response: meteringV1.AdmitResponse, plan = "", test = false): void {
  throwIfRateLimited(response, plan);
  if (response.decision === Decision.DECISION_QUOTA_EXCEEDED && test) throw testAllowanceExhausted(response, plan);
  if (response.decision === Decision.DECISION_QUOTA_EXCEEDED) {
    throw new AppError("QUOTA_EXCEEDED", "monthly render quota exhausted", `Wait for the next period (GET /v1/keys/usage), or ${moreRoom(plan)}.`, {
      retryAfterSeconds: response.retryAfterSeconds,
    });
  }
  if (response.decision === Decision.DECISION_CONCURRENCY_EXCEEDED) {
    throw new AppError(
      "CONCURRENCY_EXCEEDED",
      "too many renders in flight for your plan",
      `Retry after ${response.retryAfterSeconds} s, when a render in flight has finished.`,
      { retryAfterSeconds: response.retryAfterSeconds },
    );
  }
  if (response.decision !== Decision.DECISION_ALLOWED) throw new AppError("INTERNAL_ERROR", "admission failed", "Retry with exponential backoff.");
}

/**
 * Gives back the slot and the quota unit of an admitted job that could not be
 * submitted. If metering cannot be reached either, the slot's lease frees it
 * later (SLOT_LEASE_SECONDS).
 */
export async function releaseAdmitted(metering: meteringV1.MeteringServiceClient, jobId: string, logger: Logger): Promise<void> {
  try {
    await call(metering, metering.release, { jobId, refund: true });
  } catch (err) {
    logger.error({ err, jobId }, "could not release an admitted job that was never submitted; its lease will free the slot");
  }
}

/** The longest a request may wait for a concurrency slot (Prefer: wait=N). */
export const MAX_SLOT_WAIT_SECONDS = 60;
/** How often a waiting request asks metering again for a slot. */
const SLOT_POLL_MS = 250;

/**
 * The seconds a request's `Prefer: wait=N` (RFC 7240) asks to wait for a concurrency slot, at most
 * MAX_SLOT_WAIT_SECONDS (a larger N counts as that); undefined without one, or with 0.
 */
export function slotWaitSeconds(ctx: Context): number | undefined {
  for (const preference of ctx.get("Prefer").split(",")) {
    const match = /^\s*wait\s*=\s*"?(\d{1,9})"?\s*$/i.exec(preference);
    if (match) return Number(match[1]) > 0 ? Math.min(Number(match[1]), MAX_SLOT_WAIT_SECONDS) : undefined;
  }
  return undefined;
}

/**
 * A decision refused for concurrency, asked again of metering (`again`, whose rate place the first
 * Admit took) until a slot is free, `seconds` have passed, or the client went away: the last decision.
 */
export async function waitForSlot(
  ctx: Context,
  decision: meteringV1.AdmitResponse,
  seconds: number | undefined,
  again: () => Promise<meteringV1.AdmitResponse>,
): Promise<meteringV1.AdmitResponse> {
  if (seconds === undefined) return decision;
  const deadline = performance.now() + seconds * 1000;
  while (decision.decision === Decision.DECISION_CONCURRENCY_EXCEEDED && !ctx.req.socket.destroyed) {
    const left = deadline - performance.now();
    if (left <= 0) break;
    await new Promise((resolve) => setTimeout(resolve, Math.min(SLOT_POLL_MS, left)));
    decision = await again();
  }
  return decision;
}

import { meteringV1 } from "@pressroom/contracts";
import { AppError, call, newId, type Logger } from "@pressroom/platform";
import type { Context } from "koa";
import { admit, throwIfNotAdmitted } from "./admission";
import type { Principal } from "./auth";

/** What admitting a preview asks of: metering, and a logger for a release that cannot reach it. */
export interface PreviewDeps {
  metering: meteringV1.MeteringServiceClient;
  logger: Logger;
}

/** A preview admitted for a key: its id (its slot's name in metering) and what cancels it. */
export interface AdmittedPreview {
  id: string;
  /** Aborted when the request's client goes away: the render call is cancelled, and render stops the preview's Chromium work. */
  signal: AbortSignal;
}

/** Whether a failed preview stays charged: the document's fault (it failed to render, or ran past its deadline) or its caller's (it went away). */
function chargedFailure(err: unknown, signal: AbortSignal): boolean {
  return signal.aborted || (err instanceof AppError && err.code === "RENDER_FAILED");
}

/** The request's client closed its connection before its answer was written. */
function callerGone(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.res.once("close", () => {
    if (!ctx.res.writableFinished) controller.abort(new AppError("INTERNAL_ERROR", "the client went away", "Keep the connection open for the answer."));
  });
  return controller.signal;
}

/**
 * Every preview Chromium renders for a key (a template's at save, a preview.png that found none
 * stored, a draft's) goes through here, for a request that has already passed the rate limit:
 * metering admits it (one preview unit of the month's allowance and one of the key's concurrency
 * slots, shared with its renders: 429 QUOTA_EXCEEDED naming previews, or CONCURRENCY_EXCEEDED),
 * `render` runs it with a signal that aborts when the caller goes away, and its slot is released
 * however it ends (by its short lease if this gateway dies first). The unit follows the render
 * rule: charged when it rendered, when it failed for the document (RENDER_FAILED: its script, its
 * deadline, a limit) and when its caller went away; refunded when it failed on our side or never
 * reached Chromium (a refusal before it, a full preview queue), and when `charged` says that what
 * `render` answered was not rendered for this call (it was found stored).
 */
export async function runPreview<T>(
  deps: PreviewDeps,
  ctx: Context,
  principal: Principal,
  render: (preview: AdmittedPreview) => Promise<T>,
  charged: (result: T) => boolean = () => true,
): Promise<T> {
  const id = newId("pvw");
  const decision = await admit(ctx, deps.metering, principal, id, undefined, 1, true, meteringV1.AdmissionKind.ADMISSION_KIND_PREVIEW);
  if (decision.decision === meteringV1.Decision.DECISION_QUOTA_EXCEEDED) {
    throw new AppError(
      "QUOTA_EXCEEDED",
      "monthly preview allowance exhausted",
      "Template previews (a save, a preview.png not yet rendered) have their own monthly allowance, shown as previews in GET /v1/keys/usage: " +
        "wait for the next period, or upgrade with POST /v1/billing/checkout.",
      { retryAfterSeconds: decision.retryAfterSeconds },
    );
  }
  throwIfNotAdmitted(decision, principal.plan);
  const signal = callerGone(ctx);
  let refund = true;
  try {
    const result = await render({ id, signal });
    refund = !charged(result);
    return result;
  } catch (err) {
    refund = !chargedFailure(err, signal);
    throw err;
  } finally {
    await call(deps.metering, deps.metering.release, { jobId: id, refund }).catch((err: unknown) =>
      deps.logger.error({ err, previewId: id }, "could not release a preview's slot; its lease will free it"),
    );
  }
}

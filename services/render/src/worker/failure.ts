import type { jobEventsV1 } from "@pressroom/contracts";
import { AppError } from "@pressroom/platform";
import { RenderFailure } from "../producer/producer";

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

/**
 * A poison job: the browser (or the worker) died under it at `deaths` attempts. Its document is
 * presumed to kill what renders it, so it is not tried again, and it is the customer's: charged.
 */
export function poisonJob(deaths: number): AppError {
  return new AppError(
    "RENDER_FAILED",
    `the document was rendering each time the browser or its worker died (${deaths} times): it is not tried again (a poison job)`,
    "",
  );
}

/** Whether another attempt may succeed: our failures, and a page lost with others (which may be ours or the document's). */
export function worthRetrying(err: unknown): boolean {
  return failureOf(err).code !== "RENDER_FAILED" || (err instanceof RenderFailure && err.retryable);
}

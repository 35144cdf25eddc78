/**
 * When the next callback attempt happens: exponential backoff with full
 * jitter, honouring Retry-After, inside a retry window that starts when the
 * job finished.
 */
export interface RetryPolicy {
  /** The first retry waits a random time in [0, baseMs). */
  baseMs: number;
  /** No single wait is drawn from a range wider than this. */
  capMs: number;
  /** Retries stop this long after the job finished. */
  windowMs: number;
}

export type NextStep = { kind: "retry"; at: Date } | { kind: "exhausted"; reason: string };

/** The range the wait after failed attempt `attempt` (1-based) is drawn from: base · 2^(attempt-1), capped. */
export function backoffCeilingMs(policy: RetryPolicy, attempt: number): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 52);
  return Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
}

/** Full jitter (AWS architecture blog, "Exponential Backoff And Jitter"): uniform in [0, ceiling). */
export function retryDelayMs(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  return Math.floor(random() * backoffCeilingMs(policy, attempt));
}

/**
 * Parses Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
 * Returns milliseconds from now, or undefined when absent or unusable.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^[0-9]{1,10}$/.test(trimmed)) return Number(trimmed) * 1_000;
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (!Number.isFinite(at)) return undefined;
  return Math.max(0, at - nowMs);
}

export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1_000 === 0) return `${ms / 1_000} s`;
  return `${ms} ms`;
}

/**
 * Decides what follows failed attempt `attempt`. The wait is the jittered
 * backoff, or Retry-After when that is longer; the retry is never later than
 * the end of the window, so the last attempt happens at the window's end.
 * A Retry-After that reaches past the window ends the delivery: retrying
 * earlier would ignore what the receiver asked.
 */
export function nextStep(policy: RetryPolicy, input: { attempt: number; finishedAt: Date; now: Date; retryAfterMs?: number; random?: () => number }): NextStep {
  const now = input.now.getTime();
  const deadline = input.finishedAt.getTime() + policy.windowMs;
  if (now >= deadline) return { kind: "exhausted", reason: `no success within the retry window (${formatDuration(policy.windowMs)})` };
  let delay = retryDelayMs(policy, input.attempt, input.random);
  if (input.retryAfterMs !== undefined) {
    if (now + input.retryAfterMs > deadline) {
      return { kind: "exhausted", reason: `Retry-After asks to wait past the end of the retry window (${formatDuration(policy.windowMs)})` };
    }
    delay = Math.max(delay, input.retryAfterMs);
  }
  return { kind: "retry", at: new Date(Math.min(now + delay, deadline)) };
}

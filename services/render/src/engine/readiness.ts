import type { CDPSession, Protocol } from "puppeteer-core";
import type { ActiveJob } from "./job";
import { RenderFailure } from "./types";

/** The one condition of a job's waitFor; a polled one may bound its wait (timeoutMs) below the deadline. */
export type WaitCondition = (({ selector: string } | { expression: string } | { networkIdle: true }) & { timeoutMs?: number }) | { delayMs: number };

/** How often a condition is looked at again. */
const POLL_MS = 50;
/** network_idle: how long no sub-request may have been in flight. */
export const NETWORK_IDLE_MS = 500;
/** What a job keeps of its deadline for printing after waiting: a fifth, at most this much. */
const PRINT_RESERVE_MS = 3_000;

/** How long of a job's deadline the readiness wait may take, keeping room to print. */
export function readinessBudgetMs(deadlineMs: number): number {
  return deadlineMs - Math.min(PRINT_RESERVE_MS, deadlineMs / 5);
}

/** The condition as the customer wrote it, for messages. */
export function describeCondition(condition: WaitCondition): string {
  if ("selector" in condition) return `wait_for selector ${JSON.stringify(condition.selector)}`;
  if ("expression" in condition) return `wait_for expression ${JSON.stringify(clip(condition.expression))}`;
  if ("networkIdle" in condition) return `wait_for network_idle (no sub-request for ${NETWORK_IDLE_MS} ms)`;
  return `wait_for delay_ms ${condition.delayMs}`;
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

export function notReady(condition: WaitCondition, bounded = false): RenderFailure {
  const within = bounded && "timeoutMs" in condition ? `its wait_for.timeout_ms (${condition.timeoutMs} ms)` : "the render deadline";
  return new RenderFailure("not_ready", `${describeCondition(condition)} was not met within ${within}`);
}

/** Whether a value the page evaluated to is truthy, as JavaScript judges it. */
function truthy(result: Protocol.Runtime.RemoteObject): boolean {
  if (result.type === "undefined") return false;
  if (result.type === "object") return result.subtype !== "null";
  if (result.unserializableValue !== undefined) return !["NaN", "-0", "0n"].includes(result.unserializableValue);
  return Boolean(result.value);
}

function expressionThrew(condition: WaitCondition, details: Protocol.Runtime.ExceptionDetails): RenderFailure {
  const thrown = (details.exception?.description ?? details.text).split("\n")[0]!.slice(0, 300);
  return new RenderFailure("invalid_document", `${describeCondition(condition)} threw ${thrown}: use an expression that evaluates without throwing`);
}

/** One look at the condition: true once it holds. */
async function holds(session: CDPSession, job: ActiveJob, condition: WaitCondition): Promise<boolean> {
  if ("networkIdle" in condition) return job.subrequestsInFlight === 0 && performance.now() - job.lastSubrequestAt >= NETWORK_IDLE_MS;
  if ("selector" in condition) {
    const found = await session.send("Runtime.evaluate", {
      expression: `document.querySelector(${JSON.stringify(condition.selector)}) !== null`,
      returnByValue: true,
    });
    if (found.exceptionDetails) {
      throw new RenderFailure("invalid_document", `${describeCondition(condition)} is not a valid CSS selector`);
    }
    return found.result.value === true;
  }
  if ("expression" in condition) {
    const value = await session.send("Runtime.evaluate", { expression: condition.expression, awaitPromise: true, returnByValue: false });
    if (value.result.objectId) void session.send("Runtime.releaseObject", { objectId: value.result.objectId }).catch(() => undefined);
    // An expression that throws would throw at every poll: the job fails at once, naming the error, rather than wait out its deadline.
    if (value.exceptionDetails) throw expressionThrew(condition, value.exceptionDetails);
    return truthy(value.result);
  }
  return false;
}

/**
 * Waits, once the document loaded, until `condition` holds, polling every
 * 50 ms, for at most `budgetMs`; the job's own failure (its deadline, a lost
 * page) ends the wait first. Not met in time: `not_ready`, naming the condition.
 */
export async function waitUntilReady(session: CDPSession, job: ActiveJob, condition: WaitCondition, budgetMs: number): Promise<void> {
  const started = performance.now();
  if ("delayMs" in condition) {
    if (condition.delayMs > budgetMs) throw notReady(condition);
    await sleep(condition.delayMs, job.controller.signal);
    return;
  }
  const bounded = "timeoutMs" in condition && condition.timeoutMs !== undefined && condition.timeoutMs < budgetMs;
  const waitMs = bounded ? condition.timeoutMs! : budgetMs;
  for (;;) {
    if (job.failure) throw job.failure;
    if (await holds(session, job, condition)) return;
    if (performance.now() - started + POLL_MS > waitMs) throw notReady(condition, bounded);
    await sleep(POLL_MS, job.controller.signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

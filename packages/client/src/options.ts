/** The options of the client, of its calls and of signup. */
import type { FetchLike } from "./http";

export interface PressroomOptions {
  /** Required: the API key, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Service base address. Default: `PRESSROOM_BASE_URL` when set, else `http://localhost:8080`. */
  baseUrl?: string;
  /** Deadline per request, including reading the answer. Default 90,000 ms. */
  timeoutMs?: number;
  /** A fetch implementation. Default: the global `fetch` (Node.js 18+). */
  fetch?: FetchLike;
  /**
   * Retries of a 429 or 5xx answer; default 0 (none). A retry waits Retry-After
   * when the answer has one, else a jittered backoff (0.5 s, 1 s, 2 s, … at most
   * 8 s). With retries on, `render`, `image`, `screenshot` (and their `…Document` forms), `checkout`
   * and `createBatch` send an Idempotency-Key of their own (the same on every attempt of one call).
   */
  maxRetries?: number;
  /** The longest Retry-After waited for; a longer one (a monthly quota) rejects at once. Default 60,000 ms. */
  maxRetryWaitMs?: number;
}

/** Options of `waitForJob`. */
export interface WaitOptions {
  /** How long to wait for the job to finish. Default 90,000 ms. */
  timeoutMs?: number;
  /** The pause between two reads of the job. Default 1,000 ms. */
  intervalMs?: number;
}

/**
 * Options of a call that changes something (render, image, screenshot, checkout, createBatch).
 * `idempotencyKey` makes a retry safe: send the same key (1–255 visible ASCII
 * characters, e.g. a UUID) with every retry of one operation, and the service
 * answers the first response again instead of doing it twice (24 h, per API
 * key). The same key with a different request rejects with IDEMPOTENCY_KEY_REUSED.
 * `waitForSlot` (render and image: seconds, 1 to 60) sends `Prefer: wait=N`: a render over the
 * key's concurrency limit waits that long for a slot before CONCURRENCY_EXCEEDED.
 */
export interface RequestOptions {
  idempotencyKey?: string;
  waitForSlot?: number;
}

export interface SignupOptions {
  email: string;
  baseUrl?: string;
  timeoutMs?: number;
  fetch?: FetchLike;
}

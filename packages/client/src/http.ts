import { PressroomError } from "./errors";

/** The `fetch` the client calls: the global one by default, any compatible function otherwise. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export const USER_AGENT = "pressroom-node/0.1.0";

export interface Transport {
  /** Base address without a trailing slash. */
  baseUrl: string;
  /** Per-request deadline in ms; Infinity for none. */
  timeoutMs: number;
  fetch: FetchLike;
  /** Retries of a 429 or 5xx answer (0: none). */
  maxRetries: number;
  /** The longest Retry-After waited for; a longer one rejects at once. */
  maxRetryWaitMs: number;
}

export const DEFAULT_BASE_URL = "http://localhost:8080";
/** The environment variable read for the base address when none is given. */
export const BASE_URL_VARIABLE = "PRESSROOM_BASE_URL";
/** Above the gateway's synchronous wait (60 s), so a slow sync render still answers. */
export const DEFAULT_TIMEOUT_MS = 90_000;
export const DEFAULT_MAX_RETRY_WAIT_MS = 60_000;
/** Backoff between retries without Retry-After: 0.5 s, 1 s, 2 s, … at most 8 s, jittered (as the Python client). */
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;

export interface TransportOptions {
  baseUrl?: string;
  timeoutMs?: number;
  fetch?: FetchLike;
  maxRetries?: number;
  maxRetryWaitMs?: number;
}

/** The base address: the one given, else PRESSROOM_BASE_URL when set, else http://localhost:8080. */
function baseUrlOf(given: string | undefined): string {
  if (given !== undefined) return given;
  const fromEnv = typeof process === "undefined" ? undefined : process.env?.[BASE_URL_VARIABLE];
  return fromEnv || DEFAULT_BASE_URL;
}

/** The global fetch, looked up at call time (and called unbound, which browsers require). */
const globalFetch: FetchLike = (input, init) => globalThis.fetch(input, init);

export function makeTransport(options: TransportOptions): Transport {
  const baseUrl = normalizeBaseUrl(baseUrlOf(options.baseUrl));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError("Pressroom: timeoutMs must be a positive number of milliseconds");
  }
  if (options.fetch !== undefined && typeof options.fetch !== "function") throw new TypeError("Pressroom: fetch must be a function");
  const maxRetries = options.maxRetries ?? 0;
  if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) throw new TypeError("Pressroom: maxRetries must be a whole number >= 0");
  const maxRetryWaitMs = options.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS;
  if (typeof maxRetryWaitMs !== "number" || Number.isNaN(maxRetryWaitMs) || maxRetryWaitMs < 0) {
    throw new TypeError("Pressroom: maxRetryWaitMs must be a number of milliseconds >= 0");
  }
  return { baseUrl, timeoutMs, fetch: options.fetch ?? globalFetch, maxRetries, maxRetryWaitMs };
}

/**
 * Milliseconds to wait before retrying after `err`, or undefined to give up:
 * 429 and 5xx answers are retried up to maxRetries times, after Retry-After
 * when the answer has one (one longer than maxRetryWaitMs, such as a monthly
 * quota, is not waited for) and otherwise after a jittered exponential backoff.
 */
export function retryWait(transport: Transport, err: unknown, retriesDone: number): number | undefined {
  if (!(err instanceof PressroomError) || retriesDone >= transport.maxRetries) return undefined;
  if (!(err.status === 429 || err.status >= 500)) return undefined;
  if (err.retryAfter !== undefined) return err.retryAfter * 1000 <= transport.maxRetryWaitMs ? err.retryAfter * 1000 : undefined;
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retriesDone, transport.maxRetryWaitMs);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Runs `attempt` again after each retryable failure, as retryWait says. */
async function withRetries<T>(transport: Transport, attempt: () => Promise<T>): Promise<T> {
  for (let retriesDone = 0; ; retriesDone++) {
    try {
      return await attempt();
    } catch (err) {
      const wait = retryWait(transport, err, retriesDone);
      if (wait === undefined) throw err;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

function normalizeBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`Pressroom: baseUrl is not an absolute URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError("Pressroom: baseUrl must be an http(s) URL");
  if (url.search || url.hash) throw new TypeError("Pressroom: baseUrl must not have a query or fragment");
  return url.href.replace(/\/+$/, "");
}

/** Seconds from a Retry-After header: delta-seconds or an HTTP-date. */
export function parseRetryAfter(value: string | null, nowMs: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^[0-9]+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - nowMs) / 1000));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Builds the error of a non-2xx answer from its `{"error","code","hint"}` body. */
export function errorFromResponse(response: Response, text: string): PressroomError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
  if (isRecord(body) && typeof body.error === "string" && typeof body.code === "string" && (body.hint === undefined || typeof body.hint === "string")) {
    return new PressroomError({ code: body.code, status: response.status, message: body.error, hint: body.hint ?? "", retryAfter });
  }
  return new PressroomError({
    code: "INTERNAL_ERROR",
    status: response.status,
    message: `unexpected HTTP ${response.status} answer without a Pressroom error body`,
    hint: "Check baseUrl (a proxy may have answered); retry with exponential backoff.",
    retryAfter,
  });
}

/** Origin only: output URLs carry a signature that must not end up in error messages or logs. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the server";
  }
}

/**
 * Runs one fetch plus the reading of its body under the transport's deadline;
 * network failures and timeouts become PressroomError (status 0).
 */
export async function withDeadline<T>(transport: Transport, url: string, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = Number.isFinite(transport.timeoutMs)
    ? setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, transport.timeoutMs)
    : undefined;
  try {
    return await run(controller.signal);
  } catch (err) {
    if (err instanceof PressroomError) throw err;
    if (timedOut) {
      throw new PressroomError({
        code: "TIMEOUT",
        status: 0,
        message: `no answer from ${originOf(url)} within ${transport.timeoutMs} ms`,
        hint: "Retry later, raise timeoutMs, or send webhook_url to render asynchronously.",
        cause: err,
      });
    }
    throw new PressroomError({
      code: "CONNECTION_ERROR",
      status: 0,
      message: `could not reach ${originOf(url)}: ${err instanceof Error ? err.message : String(err)}`,
      hint: "Check baseUrl and the network; retry with exponential backoff.",
      cause: err,
    });
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

interface CallOptions {
  /** Undefined: no Authorization header. */
  apiKey?: string;
  body?: unknown;
  idempotencyKey?: string;
  /** Seconds to wait for a concurrency slot: `Prefer: wait=N`. */
  waitForSlot?: number;
}

/** The request of one API call: what it accepts, its key, Idempotency-Key and JSON body. */
/** The methods of the API. */
export type Method = "GET" | "POST" | "PUT" | "DELETE";

function requestInit(method: Method, accept: string, options: CallOptions): RequestInit {
  const headers: Record<string, string> = { Accept: accept, "User-Agent": USER_AGENT };
  if (options.apiKey !== undefined) headers.Authorization = `Bearer ${options.apiKey}`;
  if (options.idempotencyKey !== undefined) headers["Idempotency-Key"] = options.idempotencyKey;
  if (options.waitForSlot !== undefined) headers.Prefer = `wait=${options.waitForSlot}`;
  if (options.body === undefined) return { method, headers };
  headers["Content-Type"] = "application/json";
  return { method, headers, body: JSON.stringify(options.body) };
}

/** The JSON of a 2xx answer; `what` names what was expected when it is not JSON. */
function parseAnswer(response: Response, text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new PressroomError({
      code: "INTERNAL_ERROR",
      status: response.status,
      message: `HTTP ${response.status} answer is not ${what}`,
      hint: "Check baseUrl (a proxy may have answered); retry with exponential backoff.",
      cause: err,
    });
  }
}

/** One JSON call of the API. */
export async function requestJson<T>(transport: Transport, method: Method, path: string, options: CallOptions = {}): Promise<T> {
  const url = `${transport.baseUrl}${path}`;
  const init = requestInit(method, "application/json", options);
  return withRetries(transport, () =>
    withDeadline(transport, url, async (signal) => {
      const response = await transport.fetch(url, { ...init, signal });
      const text = await response.text();
      if (!response.ok) throw errorFromResponse(response, text);
      // 204 No Content (a delete) has no body.
      if (response.status === 204) return undefined as T;
      return parseAnswer(response, text, "JSON") as T;
    }),
  );
}

/**
 * A synchronous render asking for the document itself (Accept: `documentType`):
 * the document's bytes with the headers that stand for the JSON, or the JSON
 * answer when there is no document (a job still running: 202).
 */
export async function requestDocument(
  transport: Transport,
  path: string,
  documentType: string,
  options: CallOptions & { apiKey: string; body: unknown },
): Promise<{ bytes: Uint8Array; headers: Headers } | { json: unknown }> {
  const url = `${transport.baseUrl}${path}`;
  const init = requestInit("POST", documentType, options);
  return withRetries(transport, () =>
    withDeadline(transport, url, async (signal) => {
      const response = await transport.fetch(url, { ...init, signal });
      if (!response.ok) throw errorFromResponse(response, await response.text());
      if (response.headers.get("content-type")?.split(";")[0]?.trim() === documentType) {
        return { bytes: new Uint8Array(await response.arrayBuffer()), headers: response.headers };
      }
      return { json: parseAnswer(response, await response.text(), `${documentType} or JSON`) };
    }),
  );
}

/** One call of the API answered with bytes of type `accept` (a preview image); an error answer rejects as any call's. */
export async function requestBinary(transport: Transport, method: Method, path: string, accept: string, options: CallOptions = {}): Promise<Uint8Array> {
  const url = `${transport.baseUrl}${path}`;
  const init = requestInit(method, accept, options);
  return withRetries(transport, () =>
    withDeadline(transport, url, async (signal) => {
      const response = await transport.fetch(url, { ...init, signal });
      if (!response.ok) throw errorFromResponse(response, await response.text());
      return new Uint8Array(await response.arrayBuffer());
    }),
  );
}

/** A GET answered with bytes: a signed output URL (no key: the URL is its own credential), or an API path with the key (a template's preview or asset). */
export async function requestBytes(transport: Transport, url: string, apiKey?: string): Promise<Uint8Array> {
  const headers: Record<string, string> = { Accept: "*/*", "User-Agent": USER_AGENT };
  if (apiKey !== undefined) headers.Authorization = `Bearer ${apiKey}`;
  return withRetries(transport, () =>
    withDeadline(transport, url, async (signal) => {
      const response = await transport.fetch(url, { method: "GET", headers, signal });
      if (!response.ok) throw errorFromResponse(response, await response.text());
      return new Uint8Array(await response.arrayBuffer());
    }),
  );
}

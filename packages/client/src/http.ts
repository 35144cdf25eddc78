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
}

export const DEFAULT_BASE_URL = "http://localhost:8080";
/** Above the gateway's synchronous wait (60 s), so a slow sync render still answers. */
export const DEFAULT_TIMEOUT_MS = 90_000;

/** The global fetch, looked up at call time (and called unbound, which browsers require). */
const globalFetch: FetchLike = (input, init) => globalThis.fetch(input, init);

export function makeTransport(options: { baseUrl?: string; timeoutMs?: number; fetch?: FetchLike }): Transport {
  const baseUrl = normalizeBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError("Pressroom: timeoutMs must be a positive number of milliseconds");
  }
  if (options.fetch !== undefined && typeof options.fetch !== "function") throw new TypeError("Pressroom: fetch must be a function");
  return { baseUrl, timeoutMs, fetch: options.fetch ?? globalFetch };
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
  return withDeadline(transport, url, async (signal) => {
    const response = await transport.fetch(url, { ...init, signal });
    const text = await response.text();
    if (!response.ok) throw errorFromResponse(response, text);
    // 204 No Content (a delete) has no body.
    if (response.status === 204) return undefined as T;
    return parseAnswer(response, text, "JSON") as T;
  });
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
  return withDeadline(transport, url, async (signal) => {
    const response = await transport.fetch(url, { ...init, signal });
    if (!response.ok) throw errorFromResponse(response, await response.text());
    if (response.headers.get("content-type")?.split(";")[0]?.trim() === documentType) {
      return { bytes: new Uint8Array(await response.arrayBuffer()), headers: response.headers };
    }
    return { json: parseAnswer(response, await response.text(), `${documentType} or JSON`) };
  });
}

/** GET of a signed output URL: no Authorization header (the URL is its own credential). */
export async function requestBytes(transport: Transport, url: string): Promise<Uint8Array> {
  return withDeadline(transport, url, async (signal) => {
    const response = await transport.fetch(url, { method: "GET", headers: { Accept: "*/*", "User-Agent": USER_AGENT }, signal });
    if (!response.ok) throw errorFromResponse(response, await response.text());
    return new Uint8Array(await response.arrayBuffer());
  });
}

/**
 * The console's one way to the API: the same /v1 operations every client calls, with the
 * session cookie the browser sends by itself (page scripts never see it) and, on a request that
 * changes anything, the session's CSRF token.
 */

/** An API error, as the API words it: {"error","code","hint"}, its status, and Retry-After when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

let csrfToken = "";
let unauthorized: () => void = () => undefined;

/** The session's CSRF token (GET /console/session), sent with every change. */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** What to do when the session is gone (expired, signed out elsewhere, the key revoked). */
export function onUnauthorized(handler: () => void): void {
  unauthorized = handler;
}

async function failure(response: Response): Promise<ApiError> {
  const retry = response.headers.get("retry-after");
  try {
    const body = (await response.json()) as { error: string; code: string; hint: string };
    return new ApiError(response.status, body.code, body.error, body.hint, retry ? Number(retry) : undefined);
  } catch {
    return new ApiError(response.status, "INTERNAL_ERROR", `the server answered ${response.status}`, "Retry in a moment.");
  }
}

/** One JSON call; an answer without a body (204) is undefined. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRF-Token"] = csrfToken;
  const response = await fetch(path, { method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) {
    const error = await failure(response);
    if (response.status === 401 && !path.startsWith("/console/session")) unauthorized();
    throw error;
  }
  return response.status === 204 ? (undefined as T) : ((await response.json()) as T);
}

/** A binary answer (a preview image) as an object URL the page shows. */
export async function imageUrl(path: string): Promise<string> {
  const response = await fetch(path, { credentials: "same-origin" });
  if (!response.ok) throw await failure(response);
  return URL.createObjectURL(await response.blob());
}

/** A query string of the values that are set. */
export function query(params: Record<string, string | number | undefined>): string {
  const set = Object.entries(params).filter(([, value]) => value !== undefined && value !== "");
  return set.length ? `?${new URLSearchParams(set.map(([k, v]) => [k, String(v)])).toString()}` : "";
}

/** The shapes the console reads (the OpenAPI document at /v1/openapi.json is the reference). */
export interface Session {
  key_prefix: string;
  plan: string;
  csrf_token: string;
}

export interface Usage {
  plan: string;
  period: { start: string; end: string };
  renders: { used: number; limit: number; remaining: number };
  rate_limit: { limit: number; remaining: number; reset_seconds: number; window_seconds: number };
  concurrency: { limit: number; in_flight: number };
}

export interface Day {
  date: string;
  succeeded: number;
  failed: number;
  refunded: number;
}

export interface Job {
  id: string;
  status: "queued" | "rendering" | "succeeded" | "failed";
  kind: "render" | "image";
  template_id: string | null;
  template_version: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  url: string | null;
  expires_at: string | null;
  content_type: string | null;
  size_bytes: number | null;
  error: { code: string; message: string } | null;
  webhook: { state: string; attempts: number; last_status: number | null; next_attempt_at: string | null } | null;
  events: { id: string; type: string; time: string; source: string }[];
}

export interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  job_id: string;
  attempt: number;
  status: "pending" | "succeeded" | "failed";
  response_status: number | null;
  duration_ms: number | null;
  created_at: string;
  next_retry_at: string | null;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface Template {
  id: string;
  version: number;
  name: string;
  description: string;
  output: "pdf" | "png";
  page?: { format: string; landscape: boolean; margin: Record<"top" | "right" | "bottom" | "left", string> };
  width?: number;
  height?: number;
  device_scale_factor?: 1 | 2;
  data_schema: Record<string, unknown>;
  sample_data: Record<string, unknown>;
  preview_url: string;
  visibility: "public" | "private";
  html?: string;
  asset_names?: string[];
}

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

/** A change answered with an image (a draft's preview) as an object URL; dropped when `signal` aborts. */
export async function postForImage(path: string, body: unknown, signal: AbortSignal): Promise<string> {
  const headers = { Accept: "image/png", "Content-Type": "application/json", "X-CSRF-Token": csrfToken };
  const response = await fetch(path, { method: "POST", headers, credentials: "same-origin", body: JSON.stringify(body), signal });
  if (!response.ok) {
    const error = await failure(response);
    if (response.status === 401) unauthorized();
    throw error;
  }
  return URL.createObjectURL(await response.blob());
}

/** A query string of the values that are set. */
export function query(params: Record<string, string | number | undefined>): string {
  const set = Object.entries(params).filter(([, value]) => value !== undefined && value !== "");
  return set.length ? `?${new URLSearchParams(set.map(([k, v]) => [k, String(v)])).toString()}` : "";
}

/** The shapes the console reads: the JavaScript client's types (the OpenAPI document at /v1/openapi.json is the reference). */
export type { DailyUsage, Delivery, DeliveryList, JobList, JobView as Job, Template, UsageResponse as Usage } from "@pressroom/client";
export interface Session {
  key_prefix: string;
  plan: string;
  csrf_token: string;
}

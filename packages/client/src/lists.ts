import type { JobStatus, JobView } from "./types";

/**
 * The lists of the caller's account (GET /v1/jobs, /v1/keys/usage/daily, /v1/webhooks/deliveries)
 * and a delivery's replay. Pages come newest first; pass `next_cursor` back as `cursor` for the
 * next page (null on the last).
 */

/** Query of GET /v1/jobs. */
export interface JobListQuery {
  status?: JobStatus;
  kind?: "render" | "image";
  template_id?: string;
  /** 1 to 100; default 20. */
  limit?: number;
  cursor?: string;
}

/** GET /v1/jobs: each job as GET /v1/jobs/<id> answers it. */
export interface JobList {
  data: JobView[];
  next_cursor: string | null;
}

/** Query of GET /v1/keys/usage/daily: UTC dates (YYYY-MM-DD), both included, at most 92 days; by default the current period to today. */
export interface DailyUsageQuery {
  from?: string;
  to?: string;
}

/** GET /v1/keys/usage/daily: the jobs that ended each day, by outcome. */
export interface DailyUsage {
  data: { date: string; succeeded: number; failed: number; refunded: number }[];
}

/** One attempt (or a pending one) of a job's webhook callback; the webhook URL itself is never shown. */
export interface Delivery {
  id: string;
  /** The callback's id (the body's id): the same on every attempt and replay. */
  event_id: string;
  event_type: "job.succeeded" | "job.failed";
  job_id: string;
  attempt: number;
  status: "pending" | "succeeded" | "failed";
  response_status: number | null;
  duration_ms: number | null;
  created_at: string;
  next_retry_at: string | null;
}

/** Query of GET /v1/webhooks/deliveries. */
export interface DeliveryListQuery {
  job_id?: string;
  limit?: number;
  cursor?: string;
}

/** GET /v1/webhooks/deliveries. */
export interface DeliveryList {
  data: Delivery[];
  next_cursor: string | null;
}

/** A query string of the parameters that are set ("" when none is). */
export function queryString(params: object): string {
  const set = Object.entries(params).filter(([, value]) => value !== undefined && value !== "");
  return set.length ? `?${new URLSearchParams(set.map(([name, value]) => [name, String(value)])).toString()}` : "";
}

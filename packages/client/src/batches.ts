import type { ImageRequest, RenderRequest } from "./types";

/** Batches (POST /v1/batches and its reads): many render and image jobs with one request. */

/** One item of a batch: a render request (`kind` "render", the default) or an image request, without its own webhook_url. */
export type BatchItemRequest = (Omit<RenderRequest, "webhook_url"> & { kind?: "render" }) | (Omit<ImageRequest, "webhook_url"> & { kind: "image" });

/** The body of POST /v1/batches: 1 to 1,000 items. */
export interface BatchRequest {
  items: BatchItemRequest[];
}

export interface BatchCounts {
  /** Waiting for one of the key's concurrency slots. */
  queued: number;
  /** Holding one: in the render queue or rendering. */
  running: number;
  succeeded: number;
  /** A cancelled item included. */
  failed: number;
}

/** A batch, as POST /v1/batches (status "accepted"), GET and DELETE /v1/batches/<id> answer it. */
export interface Batch {
  id: string;
  status: "accepted" | "running" | "completed" | "cancelled";
  total: number;
  counts: BatchCounts;
  created_at: string;
}

/** Query of GET /v1/batches/<id>/items. */
export interface BatchItemsQuery {
  /** 1 to 100; default 20. */
  limit?: number;
  cursor?: string;
}

/** One item of a batch: its job (an ordinary job: `job(job_id)`), its url once succeeded, its error once failed (CANCELLED: never started). */
export interface BatchItem {
  index: number;
  job_id: string;
  status: "queued" | "running" | "succeeded" | "failed";
  url?: string;
  error?: { code: string; message: string };
}

/** GET /v1/batches/<id>/items: in item order. */
export interface BatchItemList {
  data: BatchItem[];
  next_cursor: string | null;
}

import type { ImageRequest, RenderRequest } from "./types";

/** Batches (POST /v1/batches and its reads): many render and image jobs with one request. */

/** One item of a batch: a render request (`kind` "render", the default) or an image request, without its own webhook_url. */
export type BatchItemRequest = (Omit<RenderRequest, "webhook_url"> & { kind?: "render" }) | (Omit<ImageRequest, "webhook_url"> & { kind: "image" });

/** The body of POST /v1/batches: 1 to 1,000 items. */
export interface BatchRequest {
  items: BatchItemRequest[];
  /** Called back once (a `BatchCompletedEvent`, signed as job callbacks) when every item has ended, after the archive is ready. */
  webhook_url?: string;
  /** true: a zip of the succeeded items' outputs is made when the batch ends (`Batch.archive`). */
  archive?: boolean;
}

/** The zip of a batch's succeeded outputs, each named by its options.filename or its index (made unique with " (2)", …). */
export interface BatchArchive {
  /** Signed, expiring download URL. Treat it like the documents themselves. */
  url: string;
  expires_at: string;
  size_bytes: number;
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
  /** With `archive: true`, once the zip is ready; null before, and without one. */
  archive: BatchArchive | null;
}

/** The JSON body of a batch's callback (`type` "batch.completed"): check its signature as a job callback's (`constructEvent<BatchCompletedEvent>`). */
export interface BatchCompletedEvent {
  /** Event id: the same on every retry, so use it to deduplicate. */
  id: string;
  type: "batch.completed";
  /** When the batch ended. */
  created_at: string;
  batch: Batch;
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

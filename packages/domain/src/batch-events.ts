import { publishEvent, subjects, z } from "@pressroom/platform";
import type { JetStreamClient } from "nats";

/**
 * The events of the BATCHES stream (JSON), after a batch's last item ended (issue 42):
 *
 * - `batch.ended` (metering → storage, archive batches only): make the zip of these items' outputs;
 * - `batch.archived` (storage → metering): the zip is stored, behind this signed URL;
 * - `batch.completed` (metering → webhook, batches with a webhook_url): call the batch back.
 *
 * Each is published with a Nats-Msg-Id made of its type and the batch id, and each consumer acts
 * on a batch's event once whatever copies arrive (its own record keyed by the batch id).
 */

const BatchId = z.string().regex(/^bat_[0-9a-z]{26}$/);

export const BatchEnded = z.object({
  v: z.literal(1),
  batch_id: BatchId,
  key_id: z.string().min(1),
  /** The succeeded items, in item order: their jobs' outputs go into the zip. */
  items: z.array(z.object({ index: z.int().min(0), job_id: z.string().min(1), filename: z.string() })),
});
export type BatchEnded = z.infer<typeof BatchEnded>;

export const BatchArchive = z.object({ url: z.string(), expires_at: z.string(), size_bytes: z.int().min(0) });
export type BatchArchive = z.infer<typeof BatchArchive>;

export const BatchArchived = z.object({
  v: z.literal(1),
  batch_id: BatchId,
  key_id: z.string().min(1),
  archive: BatchArchive,
});
export type BatchArchived = z.infer<typeof BatchArchived>;

/** The batch object of the API (GET /v1/batches/{id}). */
export const BatchObject = z.object({
  id: BatchId,
  status: z.enum(["accepted", "running", "completed", "cancelled"]),
  total: z.int(),
  counts: z.object({ queued: z.int(), running: z.int(), succeeded: z.int(), failed: z.int() }),
  created_at: z.string(),
  archive: BatchArchive.nullable(),
});
export type BatchObject = z.infer<typeof BatchObject>;

export const BatchCompleted = z.object({
  v: z.literal(1),
  /** The callback's id: the same for every copy of the event and every attempt. */
  id: z.string().min(1),
  key_id: z.string().min(1),
  webhook_url: z.string().min(1),
  /** When the batch ended (its last item, or its cancellation). */
  created_at: z.string(),
  batch: BatchObject,
});
export type BatchCompleted = z.infer<typeof BatchCompleted>;

const kinds = {
  "batch.ended": { subject: subjects.batchEnded, schema: BatchEnded },
  "batch.archived": { subject: subjects.batchArchived, schema: BatchArchived },
  "batch.completed": { subject: subjects.batchCompleted, schema: BatchCompleted },
} as const;

type Kind = keyof typeof kinds;
type Payload<K extends Kind> = z.infer<(typeof kinds)[K]["schema"]>;

/** The id of a batch's callback (its webhook-id): derived from the batch id, so every copy of its event names the same one. */
export function batchCallbackId(batchId: string): string {
  return `evt_${batchId.slice("bat_".length)}`;
}

/** Publishes one of a batch's events; a copy published within the stream's duplicate window is dropped by the server. */
export async function publishBatchEvent<K extends Kind>(js: JetStreamClient, type: K, payload: Payload<K>): Promise<void> {
  const { subject, schema } = kinds[type];
  const data = schema.parse(payload);
  const batchId = "batch_id" in data ? data.batch_id : (data as BatchCompleted).batch.id;
  await publishEvent(js, { subject, spanSubject: subject, msgId: `${type}:${batchId}`, type, data: Buffer.from(JSON.stringify(data), "utf8") });
}

/** Decodes a batch event of the given type; throws on anything else (the consumer terminates it). */
export function decodeBatchEvent<K extends Kind>(type: K, data: Uint8Array): Payload<K> {
  return kinds[type].schema.parse(JSON.parse(Buffer.from(data).toString("utf8"))) as Payload<K>;
}

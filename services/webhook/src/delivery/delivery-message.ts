import { z } from "@pressroom/platform";

/**
 * The work item on the WEBHOOKS work queue (pressroom.webhook.delivery.v1):
 * which job's callback to deliver. Everything else (target, body, attempts,
 * schedule) is read from the job's events at each attempt, so the event log
 * stays the one record. Published with Nats-Msg-Id = event_id, or for a
 * replay, with replay_id (its job.webhook_replay_requested event's id) as
 * Nats-Msg-Id.
 */
const schema = z.object({
  v: z.literal(1),
  /** The job's terminal event: the callback's id. */
  event_id: z.string().min(1),
  job_id: z.string().min(1),
  key_id: z.string().min(1),
  /** A replay's request event: one attempt, outside the retry schedule. */
  replay_id: z.string().min(1).optional(),
});

export type DeliveryMessage = z.infer<typeof schema>;

export function encodeDelivery(message: DeliveryMessage): Uint8Array {
  return Buffer.from(JSON.stringify(message), "utf8");
}

/** Throws when the bytes are not a delivery message (the consumer then terminates it). */
export function decodeDelivery(data: Uint8Array): DeliveryMessage {
  return schema.parse(JSON.parse(Buffer.from(data).toString("utf8")));
}

import { publishEvent, subjects, z } from "@pressroom/platform";
import type { JetStreamClient } from "nats";
import { appendJobEvent, type JobEvent } from "./jobs";

/**
 * The work item on the WEBHOOKS work queue (pressroom.webhook.delivery.v1):
 * which job's callback to deliver. Everything else (target, body, attempts,
 * schedule) is read from the job's events at each attempt, so the event log
 * stays the one record. Render publishes it for a job's terminal event just
 * before appending the event (appendOutcome); the webhook service publishes a
 * replay's, with replay_id (its job.webhook_replay_requested event's id) as
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

export type WebhookDelivery = z.infer<typeof schema>;

export function encodeWebhookDelivery(message: WebhookDelivery): Uint8Array {
  return Buffer.from(JSON.stringify(message), "utf8");
}

/** Throws when the bytes are not a delivery message (the consumer then terminates it). */
export function decodeWebhookDelivery(data: Uint8Array): WebhookDelivery {
  return schema.parse(JSON.parse(Buffer.from(data).toString("utf8")));
}

/**
 * Appends a terminal event of render's (job.succeeded, job.failed) after render's `lastSeq`,
 * and, when the job calls back (the event's `callback`), first schedules its callback: the
 * WEBHOOKS message, Nats-Msg-Id `<event id>.callback`. Scheduled first, a callback cannot be
 * lost to a crash between the two; if the append is then refused (another delivery of the
 * command ended the job first), the webhook service finds another outcome and drops the
 * message. So the webhook service reads no job events to learn which jobs call back, and
 * nothing at all of the jobs that do not.
 */
export async function appendOutcome(js: JetStreamClient, event: JobEvent, lastSeq: number): Promise<void> {
  if ((event.succeeded ?? event.failed)?.callback) {
    await publishEvent(js, {
      subject: subjects.webhookDelivery,
      spanSubject: subjects.webhookDelivery,
      msgId: `${event.id}.callback`,
      type: "webhook.delivery",
      data: encodeWebhookDelivery({ v: 1, event_id: event.id, job_id: event.jobId, key_id: event.keyId }),
    });
  }
  await appendJobEvent(js, "render", event, lastSeq);
}

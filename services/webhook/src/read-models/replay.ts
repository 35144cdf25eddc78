import type { webhookV1 } from "@pressroom/contracts";
import { AppError, isWrongLastSequence, publishEvent, subjects } from "@pressroom/platform";
import { appendJobEvent, encodeWebhookDelivery, foldJob, jobEvent, loadJob, nextReplayAttempt, readJobEvents } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { JetStreamClient, JetStreamManager } from "nats";
import type { WebhookDb } from "../db";
import { callbackBody } from "../delivery/callback";
import { insertDelivery, pending } from "./projection.repository";
import { findDelivery, toDelivery } from "./queries";

const MAX_CONFLICTS = 8;

const notFound = (id: string) => new AppError("NOT_FOUND", `delivery "${id}" not found`, "Use an id from GET /v1/webhooks/deliveries with the same key.");

/**
 * Replays one of the key's deliveries: its callback (the same event id and body) is sent again,
 * signed afresh, in one attempt numbered after every attempt so far. The WEBHOOKS message goes
 * first, then the request is appended to the job's history (the delivery consumer waits for it),
 * so a replay that could not be recorded is never sent, and one recorded is sent once.
 */
export async function replayDelivery(
  deps: { db: Kysely<WebhookDb>; js: JetStreamClient; jsm: JetStreamManager },
  req: webhookV1.ReplayDeliveryRequest,
): Promise<webhookV1.ReplayDeliveryResponse> {
  const delivery = /^dlv_[0-9a-z]{26}$/.test(req.deliveryId) ? await findDelivery(deps.db, req.keyId, req.deliveryId) : undefined;
  if (!delivery) throw notFound(req.deliveryId);
  let job = await loadJob(deps.jsm, delivery.job_id);
  if (!job || job.keyId !== req.keyId || !job.webhookUrl || callbackBody(job)?.eventId !== delivery.event_id) throw notFound(req.deliveryId);
  const request = jobEvent("job.webhook_replay_requested", {
    jobId: job.id,
    keyId: job.keyId,
    source: "webhook",
    webhookReplayRequested: { attempt: nextReplayAttempt(job), replayOf: delivery.id },
  });
  await publishEvent(deps.js, {
    subject: subjects.webhookDelivery,
    spanSubject: subjects.webhookDelivery,
    msgId: request.id,
    type: "webhook.delivery",
    data: encodeWebhookDelivery({ v: 1, event_id: delivery.event_id, job_id: job.id, key_id: job.keyId, replay_id: request.id }),
  });
  const answer = async (seq: number) => {
    const row = pending({
      keyId: job!.keyId,
      jobId: job!.id,
      eventId: delivery.event_id,
      eventType: delivery.event_type,
      attempt: request.webhookReplayRequested!.attempt,
      seq,
      at: request.time,
      replay: true,
    });
    // The projection writes the same row when it gets there: the answer and the list agree at once.
    await insertDelivery(deps.db, row);
    return { delivery: toDelivery({ ...row, created_at: new Date(row.created_at), next_retry_at: null, seq: String(seq) }) };
  };
  for (let conflicts = 0; ; conflicts++) {
    try {
      return await answer((await appendJobEvent(deps.js, "webhook", request, job.lastSeqOf.webhook)).seq);
    } catch (err) {
      if (!isWrongLastSequence(err) || conflicts >= MAX_CONFLICTS) throw err;
    }
    // Another webhook event of the job came first (or this one did, its ack lost): number the replay after it.
    const events = await readJobEvents(deps.jsm, job.id);
    const mine = events.find((stored) => stored.event.id === request.id);
    if (mine) return answer(mine.seq);
    job = foldJob(events)!;
    request.webhookReplayRequested!.attempt = nextReplayAttempt(job);
  }
}

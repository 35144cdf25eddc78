import { EventConsumer, consumers, publishEvent, streams, subjects, type Logger } from "@pressroom/platform";
import { isAuthentic, jobEventSpec, loadJob, readFirstJobEvent, type StoredJobEvent } from "@pressroom/domain";
import type { JetStreamClient, JetStreamManager, JsMsg } from "nats";
import { terminalEventOf } from "./callback";
import { encodeDelivery } from "./delivery-message";

export interface DispatchDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  logger: Logger;
}

/**
 * Consumes JOBS (durable `webhook-dispatch`) and, for the terminal event of a
 * job accepted with a webhook_url, schedules its delivery: one message on the
 * WEBHOOKS work queue, published with Nats-Msg-Id = the terminal event's id,
 * so a redelivered job event cannot schedule twice. The job event is acked
 * only after the WEBHOOKS publish is acknowledged.
 */
export class DispatchConsumer extends EventConsumer<StoredJobEvent> {
  constructor(private readonly deps: DispatchDeps) {
    super(
      { js: deps.js, stream: streams.JOBS, consumer: consumers.webhookDispatch, concurrency: 16 },
      jobEventSpec(deps.logger, ["job.succeeded", "job.failed"]),
    );
  }

  protected onError(err: unknown, msg: JsMsg): void {
    this.deps.logger.warn({ err, seq: msg.seq }, "scheduling a webhook failed; will retry");
    msg.nak(1_000);
  }

  protected async apply({ event }: StoredJobEvent, msg: JsMsg): Promise<void> {
    // Most jobs want no callback, and render's terminal event says so: nothing to read.
    if ((event.succeeded ?? event.failed)?.callback === false) {
      msg.ack();
      return;
    }
    // An event written before it said so: the acceptance tells, one read instead of the whole history.
    const first = await readFirstJobEvent(this.deps.jsm, event.jobId);
    if (first && isAuthentic(first) && first.event.type === "job.accepted" && first.event.accepted && !first.event.accepted.webhookUrl) {
      msg.ack();
      return;
    }
    const job = await loadJob(this.deps.jsm, event.jobId);
    // No callback wanted, or this terminal event is not the one the fold kept.
    if (!job || !job.webhookUrl || terminalEventOf(job)?.id !== event.id) {
      msg.ack();
      return;
    }
    // Delivery already under way or over: its WEBHOOKS message exists or has done its work. (A replay
    // asked for meanwhile is no attempt of the schedule.)
    if (job.webhook.state !== "pending" || job.webhook.scheduledAttempts > 0) {
      msg.ack();
      return;
    }
    await publishEvent(this.deps.js, {
      subject: subjects.webhookDelivery,
      spanSubject: subjects.webhookDelivery,
      msgId: event.id,
      type: "webhook.delivery",
      data: encodeDelivery({ v: 1, event_id: event.id, job_id: job.id, key_id: job.keyId }),
    });
    msg.ack();
    this.deps.logger.info({ jobId: job.id, eventId: event.id }, "webhook scheduled");
  }
}

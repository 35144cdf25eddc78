import { jobEventsV1 } from "@pressroom/contracts";
import { ConsumerLoop, consumers, consumeSpan, streams, type Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { JetStreamClient, JsMsg } from "nats";
import type { WebhookDb } from "../db";
import { projectEvents } from "./audit.repository";

/**
 * Feeds the audit projection from JOBS (durable `audit-projection`, every
 * event from the stream's start). Idempotent: the processed-event record and
 * the row are written in one transaction, and the message is acked only
 * after it commits.
 */
export class AuditConsumer extends ConsumerLoop {
  constructor(private readonly deps: { js: JetStreamClient; db: Kysely<WebhookDb>; logger: Logger }) {
    super({ js: deps.js, stream: streams.JOBS, consumer: consumers.auditProjection, concurrency: 1 });
  }

  protected onError(err: unknown, msg: JsMsg): void {
    this.deps.logger.warn({ err, seq: msg.seq }, "projecting a job event failed; will retry");
    msg.nak(1_000);
  }

  protected async handle(msg: JsMsg): Promise<void> {
    let event: jobEventsV1.JobEvent;
    try {
      event = jobEventsV1.JobEvent.decode(msg.data);
    } catch (err) {
      this.deps.logger.error({ err, seq: msg.seq }, "undecodable job event; not projected");
      msg.term("undecodable");
      return;
    }
    await consumeSpan("pressroom.job.{id}.v1", msg.headers, { "pressroom.job.id": event.jobId, "pressroom.event.type": event.type }, () =>
      this.deps.db.transaction().execute((trx) => projectEvents(trx, [{ streamSeq: msg.seq, event }])),
    );
    msg.ack();
  }
}

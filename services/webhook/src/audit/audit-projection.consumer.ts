/**
 * The job audit projection: the webhook service's second part, beside
 * callback delivery (../delivery). Every event of the JOBS stream becomes one
 * row of webhook.audit_job_events: who did what to which job, and when, with
 * nothing secret in it (summary.ts). It is not part of callbacks: it shares
 * only the JOBS stream and the webhook schema with them. Its files: this
 * consumer, its SQL (audit-projection.repository.ts), the payload summary
 * (summary.ts), and the rebuild from the stream's start (rebuild.ts, run by
 * dist/audit-rebuild.js).
 */
import { BatchingEventConsumer, consumers, streams, type Logger } from "@pressroom/platform";
import { jobEventSpec, type StoredJobEvent } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { JetStreamClient, JsMsg } from "nats";
import type { WebhookDb } from "../db";
import { projectEvents } from "./audit-projection.repository";

/** Events projected in one transaction at most. */
const MAX_BATCH = 256;
/** The least time between two batches while events keep coming (BatchingEventConsumer): the projection is a record, not on any request's path. */
const INTERVAL_MS = 250;

/**
 * Feeds the audit projection from JOBS (durable `audit-projection`, every
 * event from the start). Events are projected in batches, one transaction
 * each, one at a time. Idempotent: the processed-event records and the rows
 * are written in the same transaction, and each message is acked only after
 * it commits.
 */
export class AuditProjectionConsumer extends BatchingEventConsumer<StoredJobEvent> {
  constructor(private readonly deps: { js: JetStreamClient; db: Kysely<WebhookDb>; logger: Logger }) {
    super({ js: deps.js, stream: streams.JOBS, consumer: consumers.auditProjection, concurrency: MAX_BATCH }, jobEventSpec(deps.logger), {
      maxBatch: MAX_BATCH,
      intervalMs: INTERVAL_MS,
    });
  }

  protected onError(err: unknown, msg: JsMsg): void {
    this.deps.logger.warn({ err, seq: msg.seq }, "projecting a job event failed; will retry");
    msg.nak(1_000);
  }

  protected async applyBatch(events: StoredJobEvent[]): Promise<void> {
    await this.deps.db.transaction().execute((trx) =>
      projectEvents(
        trx,
        events.map(({ seq, event }) => ({ streamSeq: seq, event })),
      ),
    );
  }
}

import { EventConsumer, consumers, streams, type Logger } from "@pressroom/platform";
import { jobEventSpec, type StoredJobEvent } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { JetStreamClient, JsMsg } from "nats";
import { releaseForEvent } from "./admission.repository";
import type { MeteringDb } from "../db";
import { endBatchItem } from "../batches/batches.repository";
import type { BatchEnds } from "../batches/batch-ends";
import type { BatchDispatcher } from "../batches/dispatcher";

/**
 * Releases a job's concurrency slot when its terminal event arrives (or its
 * job.rendered, for a job with a destination: the destination's retries hold
 * no slot, and the job's end releases nothing more), and
 * refunds the quota unit of a job that failed through our fault; a batch
 * item's end is recorded, its key's next items dispatched, and its batch's
 * end noticed when it was the last (batches/batch-ends.ts). Idempotent:
 * each event is recorded as processed in the same transaction, and a job is
 * refunded at most once. Render's job.started is acked unread: the sweep
 * renews the lease of every slot whose job is still queued or rendering
 * (renewQueuedLeases), so a job's start costs metering no write.
 */
export class JobEventsConsumer extends EventConsumer<StoredJobEvent> {
  constructor(
    private readonly deps: {
      js: JetStreamClient;
      db: Kysely<MeteringDb>;
      logger: Logger;
      batches: Pick<BatchDispatcher, "kick">;
      ends: Pick<BatchEnds, "afterItem">;
    },
  ) {
    super(
      { js: deps.js, stream: streams.JOBS, consumer: consumers.meteringJobs, concurrency: 1, prefetch: 256 },
      jobEventSpec(deps.logger, ["job.rendered", "job.succeeded", "job.failed"]),
    );
  }

  protected async apply({ event }: StoredJobEvent, msg: JsMsg): Promise<void> {
    await releaseForEvent(this.deps.db, { eventId: event.id, jobId: event.jobId, refund: event.type === "job.failed" && Boolean(event.failed?.refund) });
    if (event.type === "job.rendered") {
      msg.ack();
      return;
    }
    // A batch item's end: recorded for its batch's counts, and its slot goes to the key's next item.
    const batchKey = await endBatchItem(this.deps.db, event.jobId, event.type === "job.succeeded" ? "succeeded" : "failed");
    if (batchKey) this.deps.batches.kick(batchKey);
    // Its batch's last item: what follows the batch's end (again on a redelivery, which changes nothing once done).
    await this.deps.ends.afterItem(event.jobId);
    msg.ack();
  }

  protected onError(err: unknown, msg: JsMsg): void {
    this.deps.logger.warn({ err, seq: msg.seq }, "applying a job event failed; will retry");
    msg.nak(1_000);
  }
}

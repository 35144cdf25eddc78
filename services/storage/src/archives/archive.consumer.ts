import { EventConsumer, consumers, streams, subjects } from "@pressroom/platform";
import { decodeBatchEvent, publishBatchEvent, type BatchEnded } from "@pressroom/domain";
import { sql } from "kysely";
import type { JsMsg } from "nats";
import { makeArchive, type ArchiveDeps } from "./archive";

const HEARTBEAT_MS = 10_000;
const BUSY_RETRY_MS = 5_000;

/**
 * Consumes batch.ended (durable `storage-archives`), an archive batch's end: makes its zip
 * (archive.ts) and answers batch.archived with its signed URL. One at a time per replica, under
 * the batch's advisory lock (held by a transaction, so a crash releases it): a copy of the event
 * handled meanwhile by another replica waits, then finds the archive made and answers it again.
 */
export class ArchiveConsumer extends EventConsumer<BatchEnded> {
  constructor(private readonly deps: ArchiveDeps) {
    super(
      { js: deps.bucket.js, stream: streams.BATCHES, consumer: consumers.storageArchives, concurrency: 1 },
      {
        spanSubject: subjects.batchEnded,
        logger: deps.logger,
        decode: (msg) => decodeBatchEvent("batch.ended", msg.data),
        attributes: (event) => ({ "pressroom.batch.id": event.batch_id }),
      },
    );
  }

  protected onError(err: unknown, msg: JsMsg): void {
    this.deps.logger.warn({ err, seq: msg.seq }, "making a batch's archive failed; will retry");
    msg.nak(BUSY_RETRY_MS);
  }

  protected async apply(event: BatchEnded, msg: JsMsg): Promise<void> {
    const heartbeat = setInterval(() => msg.working(), HEARTBEAT_MS);
    try {
      const archive = await this.deps.db.transaction().execute(async (trx) => {
        const key = `storage-archive:${event.batch_id}`;
        const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) as locked`.execute(trx);
        return rows[0]?.locked ? makeArchive(this.deps, event) : undefined;
      });
      if (!archive) {
        msg.nak(BUSY_RETRY_MS);
        return;
      }
      await publishBatchEvent(this.deps.bucket.js, "batch.archived", { v: 1, batch_id: event.batch_id, key_id: event.key_id, archive });
      this.deps.logger.info({ batchId: event.batch_id, sizeBytes: archive.size_bytes }, "batch archive made");
      msg.ack();
    } finally {
      clearInterval(heartbeat);
    }
  }
}

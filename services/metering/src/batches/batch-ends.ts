import { batchCallbackId, publishBatchEvent, type BatchArchived, type BatchObject } from "@pressroom/domain";
import type { Logger } from "@pressroom/platform";
import { sql, type Kysely } from "kysely";
import type { JetStreamClient } from "nats";
import type { MeteringDb } from "../db";
import { readBatch, type BatchView } from "./batches.repository";

export interface BatchEndsDeps {
  db: Kysely<MeteringDb>;
  js: JetStreamClient;
  logger: Logger;
}

/** How often the batches whose end was not announced are looked at, and how long after an announcement one is made again. */
const SWEEP_INTERVAL_MS = 10_000;
const ANNOUNCE_AGAIN_AFTER_SECONDS = 60;

/** The batch object of the API, as the callback carries it. */
export function batchObject(view: BatchView): BatchObject {
  return {
    id: view.id,
    status: view.status,
    total: view.total,
    counts: view.counts,
    created_at: view.createdAt.toISOString(),
    archive: view.archive && { url: view.archive.url, expires_at: view.archive.expiresAt.toISOString(), size_bytes: view.archive.sizeBytes },
  };
}

/**
 * What follows a batch's end: when its last item ends (or its cancellation leaves none running),
 * one replica marks it ended (a conditional update, so only one does) and, for an archive batch,
 * asks storage for the zip (batch.ended); once storage has made it (batch.archived, recorded
 * here) or at once without an archive, the end is announced (batch.completed, which webhook calls
 * back; only for a batch with a webhook_url) and the batch marked completed.
 *
 * Every publish is named by its type and the batch id (the server drops a copy within two
 * minutes; storage and webhook act on a batch's event once whatever copies arrive). A crash
 * between the mark and the publish is made good by the sweep: a batch ended but not completed
 * whose last announcement is a minute old is announced again.
 */
export class BatchEnds {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(private readonly deps: BatchEndsDeps) {}

  start(): void {
    this.timer = setInterval(() => {
      this.sweeping ??= this.sweep()
        .catch((err: unknown) => this.deps.logger.warn({ err }, "could not look at the batches whose end was not announced"))
        .finally(() => (this.sweeping = undefined));
    }, SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** A job ended: when it was its batch's last item, what follows the batch's end. */
  async afterItem(jobId: string): Promise<void> {
    const item = await this.deps.db.selectFrom("batch_items").select("batch_id").where("job_id", "=", jobId).executeTakeFirst();
    if (item) await this.check(item.batch_id);
  }

  /** Marks the batch ended if every item has ended and no one did yet, and then announces it. */
  async check(batchId: string): Promise<void> {
    const { db } = this.deps;
    const marked = await db
      .updateTable("batches")
      .set({ ended_at: sql<Date>`clock_timestamp()` })
      .where("batch_id", "=", batchId)
      .where("ended_at", "is", null)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom("batch_items").select("idx").where("batch_items.batch_id", "=", batchId).where("status", "in", ["queued", "running"]))),
      )
      .returning("batch_id")
      .executeTakeFirst();
    if (marked) await this.announce(batchId);
  }

  /** Storage made the batch's zip: recorded (the first copy of the event wins), then the end is announced. */
  async archived(event: BatchArchived): Promise<void> {
    await this.deps.db
      .updateTable("batches")
      .set({ archive_url: event.archive.url, archive_expires_at: new Date(event.archive.expires_at), archive_size_bytes: event.archive.size_bytes })
      .where("batch_id", "=", event.batch_id)
      .where("archive_url", "is", null)
      .execute();
    await this.announce(event.batch_id);
  }

  /** Publishes what follows an ended batch: its archive asked for, or its end. */
  private async announce(batchId: string): Promise<void> {
    const { db, js, logger } = this.deps;
    const batch = await db
      .selectFrom("batches")
      .select(["key_id", "webhook_url", "archive", "archive_url", "ended_at", "completed_at"])
      .where("batch_id", "=", batchId)
      .executeTakeFirst();
    if (!batch?.ended_at || batch.completed_at) return;
    await db
      .updateTable("batches")
      .set({ announced_at: sql<Date>`clock_timestamp()` })
      .where("batch_id", "=", batchId)
      .execute();
    if (batch.archive && !batch.archive_url) {
      const items = await db
        .selectFrom("batch_items")
        .select(["idx", "job_id", "filename"])
        .where("batch_id", "=", batchId)
        .where("status", "=", "succeeded")
        .orderBy("idx")
        .execute();
      await publishBatchEvent(js, "batch.ended", {
        v: 1,
        batch_id: batchId,
        key_id: batch.key_id,
        items: items.map((item) => ({ index: item.idx, job_id: item.job_id, filename: item.filename })),
      });
      logger.info({ batchId, items: items.length }, "batch ended; its archive asked for");
      return;
    }
    if (batch.webhook_url) {
      const view = await readBatch(db, batch.key_id, batchId);
      await publishBatchEvent(js, "batch.completed", {
        v: 1,
        id: batchCallbackId(batchId),
        key_id: batch.key_id,
        webhook_url: batch.webhook_url,
        created_at: batch.ended_at.toISOString(),
        batch: batchObject(view!),
      });
    }
    await db
      .updateTable("batches")
      .set({ completed_at: sql<Date>`clock_timestamp()` })
      .where("batch_id", "=", batchId)
      .execute();
    logger.info({ batchId }, "batch completed");
  }

  /** Announces again what a crash may have left unannounced. */
  private async sweep(): Promise<void> {
    const rows = await this.deps.db
      .selectFrom("batches")
      .select("batch_id")
      .where("completed_at", "is", null)
      .where("ended_at", "is not", null)
      .where(sql<boolean>`coalesce(announced_at, ended_at) < clock_timestamp() - make_interval(secs => ${ANNOUNCE_AGAIN_AFTER_SECONDS})`)
      .limit(100)
      .execute();
    for (const row of rows) await this.announce(row.batch_id);
  }
}

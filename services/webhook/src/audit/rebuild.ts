import { streams, subjects, type Logger } from "@pressroom/platform";
import { isAuthentic, storedJobEvent } from "@pressroom/domain";
import type { Kysely } from "kysely";
import { AckPolicy, DeliverPolicy, nanos, type JetStreamClient, type JetStreamManager } from "nats";
import type { WebhookDb } from "../db";
import { clearProjection, projectEvents, type StoredEvent } from "./audit-projection.repository";

const BATCH = 500;
/** Give up when the stream stops answering for this long. */
const IDLE_TIMEOUT_MS = 30_000;

/**
 * Drops the audit projection and replays the JOBS stream from its first
 * message, in one transaction: readers see the old rows until the new ones
 * are committed, and the live consumer waits on the table lock, then skips
 * what the replay already wrote (its processed-event records). Returns the
 * number of rows written.
 */
export async function rebuildAuditProjection(deps: { db: Kysely<WebhookDb>; js: JetStreamClient; jsm: JetStreamManager; logger?: Logger }): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    await clearProjection(trx);
    // Read after the lock: every event the live consumer committed before it is at or below this.
    const { state } = await deps.jsm.streams.info(streams.JOBS);
    if (state.messages === 0) return 0;
    const last = state.last_seq;
    // An ephemeral pull consumer over the whole stream. (nats.js's ordered
    // consumer needs nats-server 2.10; this works on 2.9 too.)
    const replay = await deps.jsm.consumers.add(streams.JOBS, {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subjects.allJobs,
      inactive_threshold: nanos(IDLE_TIMEOUT_MS),
      mem_storage: true,
    });
    const consumer = await deps.js.consumers.get(streams.JOBS, replay.name);
    const messages = await consumer.consume({ max_messages: BATCH });
    let written = 0;
    let batch: StoredEvent[] = [];
    let idle: NodeJS.Timeout | undefined;
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => void messages.close(), IDLE_TIMEOUT_MS);
    };
    let reachedEnd = false;
    try {
      armIdle();
      for await (const msg of messages) {
        armIdle();
        if (msg.seq > last) {
          reachedEnd = true;
          break;
        }
        try {
          const stored = storedJobEvent(msg);
          if (isAuthentic(stored)) batch.push({ streamSeq: stored.seq, event: stored.event });
          else {
            const logged = { seq: msg.seq, writer: stored.writer, type: stored.event.type };
            deps.logger?.warn(logged, "job event stored under a writer that may not write it; not projected");
          }
        } catch (err) {
          deps.logger?.error({ err, seq: msg.seq }, "undecodable job event; not projected");
        }
        if (batch.length >= BATCH) {
          written += await projectEvents(trx, batch);
          batch = [];
        }
        if (msg.seq >= last || msg.info.pending === 0) {
          reachedEnd = true;
          break;
        }
      }
    } finally {
      clearTimeout(idle);
      // Not awaited: after a break out of the iterator, nats.js's close() never settles.
      void messages.close().catch(() => undefined);
      await deps.jsm.consumers.delete(streams.JOBS, replay.name).catch(() => undefined);
    }
    if (!reachedEnd) throw new Error(`the JOBS stream stopped answering before sequence ${last}; the projection was not changed`);
    written += await projectEvents(trx, batch);
    deps.logger?.info({ events: written, lastSeq: last }, "audit projection rebuilt");
    return written;
  });
}

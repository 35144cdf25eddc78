import { isWrongLastSequence } from "@pressroom/platform";
import { appendJobEvent, readJobEvents, type JobEvent, type StoredJobEvent } from "@pressroom/domain";
import type { JetStreamClient, JetStreamManager } from "nats";

const MAX_CONFLICTS = 8;

/**
 * Appends an event to its job's webhook subject with optimistic concurrency.
 * On a wrong-last-sequence conflict the job's events are read again: if this
 * very event is already there (an earlier publish whose ack was lost), that
 * is success; otherwise the append is retried after the new last webhook
 * event. Returns the event's stream sequence.
 */
export async function appendAfter(bus: { js: JetStreamClient; jsm: JetStreamManager }, event: JobEvent, expectLastSeq: number): Promise<number> {
  let expected = expectLastSeq;
  for (let conflicts = 0; ; conflicts++) {
    try {
      const ack = await appendJobEvent(bus.js, "webhook", event, expected);
      return ack.seq;
    } catch (err) {
      if (!isWrongLastSequence(err) || conflicts >= MAX_CONFLICTS) throw err;
    }
    const events: StoredJobEvent[] = await readJobEvents(bus.jsm, event.jobId);
    const mine = events.find((stored) => stored.event.id === event.id);
    if (mine) return mine.seq;
    expected = events.findLast((stored) => stored.writer === "webhook")?.seq ?? 0;
  }
}

import { subjects, type Logger } from "@pressroom/platform";
import { isAuthentic, readFirstJobEvent, readJobEvents, readLastJobEvent } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { JetStreamManager, NatsConnection } from "nats";
import { expiredSlots, expiringSlots, heldJobs, overdueSlots, releaseAdmission, releaseForEvent, renewLease } from "./admission.repository";
import type { MeteringDb } from "../db";

/** The type of the job's latest event, with one direct get; undefined when it has none. */
async function latestEventType(jsm: JetStreamManager, jobId: string): Promise<string | undefined> {
  const last = await readLastJobEvent(jsm, jobId);
  if (!last) return undefined;
  return isAuthentic(last) ? last.event.type : "unknown";
}

const RUNNING = new Set([undefined, "job.accepted", "job.started"]);

/**
 * Frees the slots of a key's jobs whose terminal event is already in the
 * JOBS stream but not yet consumed. A sync client gets its answer when the
 * terminal event is stored; its next render must not be refused for a slot
 * the finished job still seems to hold because the consumer is a few
 * milliseconds behind. Applied exactly like the consumer applies it (same
 * event id, so the consumer later sees a duplicate). Asked only when a
 * render would be refused for concurrency, never on the admitted path.
 * Returns how many slots the key still holds.
 */
export async function settleFinishedJobs(deps: { db: Kysely<MeteringDb>; jsm: JetStreamManager; logger: Logger }, keyId: string): Promise<number> {
  // The refusal may have seen a slot the consumer was releasing that very moment: it is gone from this list then.
  const jobs = await heldJobs(deps.db, keyId);
  const freed = await Promise.all(
    jobs.map(async (jobId) => {
      try {
        // Most held jobs are running: one read tells. Only a finished one is read in full.
        if (RUNNING.has(await latestEventType(deps.jsm, jobId))) return false;
        const terminal = (await readJobEvents(deps.jsm, jobId))
          .filter(isAuthentic)
          .map((stored) => stored.event)
          .find((event) => event.type === "job.succeeded" || event.type === "job.failed");
        if (!terminal) return false;
        const refund = terminal.type === "job.failed" && Boolean(terminal.failed?.refund);
        const outcome = await releaseForEvent(deps.db, { eventId: terminal.id, jobId, refund });
        // A duplicate means the consumer got there first: the slot is free either way.
        return outcome === "duplicate" || outcome.released;
      } catch (err) {
        deps.logger.warn({ err, jobId }, "could not read a held job's events; its slot stays held");
        return false;
      }
    }),
  );
  return jobs.length - freed.filter(Boolean).length;
}

/**
 * Renews the lease of every slot past half its lease whose job is still
 * queued or rendering (its latest event is job.accepted or job.started), so a
 * job that waits long in a backlog keeps its slot and the key cannot exceed
 * its plan. Slots of jobs that never got an event (lost before acceptance)
 * are left to expire, and refundLostAdmissions refunds them. A job overdue
 * (older than `overdueAfterMs`, see jobOverdueAfterMs) is renewed no more:
 * requestOverdueExpiry has render end it, and its slot is free within a lease
 * whatever happens. Run by every replica's sweep; renewing twice is harmless.
 * Returns how many were renewed.
 */
export async function renewQueuedLeases(
  deps: { db: Kysely<MeteringDb>; jsm: JetStreamManager; logger: Logger },
  leaseSeconds: number,
  overdueAfterMs: number,
): Promise<number> {
  let renewed = 0;
  for (const jobId of await expiringSlots(deps.db, leaseSeconds / 2, overdueAfterMs)) {
    try {
      const type = await latestEventType(deps.jsm, jobId);
      if ((type === "job.accepted" || type === "job.started") && (await renewLease(deps.db, jobId, leaseSeconds))) renewed++;
    } catch (err) {
      deps.logger.warn({ err, jobId }, "could not read a held job's events; its lease was not renewed");
    }
  }
  return renewed;
}

/**
 * Asks render to end every job that holds a slot past `overdueAfterMs` and is
 * still queued or rendering: its render command is gone (aged out of the
 * RENDER queue, deleted, purged, its deliveries spent) or no attempt can still
 * be running, so nothing else would ever end it. Only render may append
 * job.failed; it checks the job itself and ends it INTERNAL_ERROR, refunded,
 * and that event frees the slot, refunds the unit and sends the callback like
 * any other. Core NATS delivers at most once: every sweep asks again while
 * the slot is there. Returns how many were asked for.
 */
export async function requestOverdueExpiry(
  deps: { db: Kysely<MeteringDb>; jsm: JetStreamManager; nc: NatsConnection; logger: Logger },
  overdueAfterMs: number,
): Promise<number> {
  let asked = 0;
  for (const jobId of await overdueSlots(deps.db, overdueAfterMs)) {
    try {
      const type = await latestEventType(deps.jsm, jobId);
      if (type !== "job.accepted" && type !== "job.started") continue;
      deps.nc.publish(subjects.jobExpiryRequested, jobId);
      asked++;
      deps.logger.warn({ jobId }, "a job is overdue; asked render to end it");
    } catch (err) {
      deps.logger.warn({ err, jobId }, "could not read an overdue job's events; asking at the next sweep");
    }
  }
  return asked;
}

/**
 * Refunds the unit of every admitted job whose slot's lease ended while
 * JetStream still knows nothing of it: it was lost before it was submitted
 * (the gateway died between Admit and its publish, or could not reach
 * metering to release it). Its slot goes with it. A job with events is left
 * to its own terminal event. Run by the sweep before it deletes expired
 * slots; throws when JOBS cannot be read, so that nothing is deleted
 * unrefunded. Returns how many were refunded.
 */
export async function refundLostAdmissions(deps: { db: Kysely<MeteringDb>; jsm: JetStreamManager; logger: Logger }): Promise<number> {
  let refunded = 0;
  for (const jobId of await expiredSlots(deps.db)) {
    if (await readFirstJobEvent(deps.jsm, jobId)) continue;
    const outcome = await releaseAdmission(deps.db, { jobId, refund: true });
    if (outcome.refunded) {
      refunded++;
      deps.logger.warn({ jobId }, "refunded an admitted job that was never submitted");
    }
  }
  return refunded;
}

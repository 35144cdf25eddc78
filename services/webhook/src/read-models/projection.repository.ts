import { createHash } from "node:crypto";
import { jobEventsV1 } from "@pressroom/contracts";
import { isAuthentic, type StoredJobEvent } from "@pressroom/domain";
import { sql, type Kysely, type Transaction } from "kysely";
import type { DeliveryRow, WebhookDb } from "../db";

/**
 * The read models' SQL on the write side: where the projection is in the JOBS stream, and what
 * each job event does to the models. Mirrors the fold of a job's events (foldJob of
 * @pressroom/domain): an event stored under a writer that may not write it, one before the job's
 * acceptance, and a second outcome are ignored; webhook bookkeeping after the outcome is not.
 */

type Trx = Transaction<WebhookDb> | Kysely<WebhookDb>;

/** The one position of the three models, which one projection feeds. */
const POSITION = "jobs";

/**
 * Locks the models' position for the rest of the transaction and answers it: the JOBS sequence
 * of the last event applied, 0 when the models are new or were lost (the row is gone with them).
 */
export async function lockPosition(trx: Transaction<WebhookDb>): Promise<number> {
  await trx
    .insertInto("read_model_position")
    .values({ name: POSITION, last_seq: 0 })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  const row = await trx.selectFrom("read_model_position").select("last_seq").where("name", "=", POSITION).forUpdate().executeTakeFirstOrThrow();
  return Number(row.last_seq);
}

export async function setPosition(trx: Transaction<WebhookDb>, seq: number): Promise<void> {
  await trx.updateTable("read_model_position").set({ last_seq: seq }).where("name", "=", POSITION).execute();
}

/** Whether the models have a position at all (false once they were lost). */
export async function hasPosition(db: Kysely<WebhookDb>): Promise<boolean> {
  return (await db.selectFrom("read_model_position").select("name").where("name", "=", POSITION).executeTakeFirst()) !== undefined;
}

/** A delivery's id: one per callback (its event id) and attempt, the same whenever the models are rebuilt. */
export function deliveryId(eventId: string, attempt: number): string {
  const digest = createHash("sha256").update(`${eventId}:${attempt}`).digest();
  return `dlv_${BigInt(`0x${digest.subarray(0, 17).toString("hex")}`)
    .toString(36)
    .padStart(26, "0")
    .slice(0, 26)}`;
}

const day = (time: string) => time.slice(0, 10);

/** Applies one job event to the models. */
export async function applyEvent(trx: Trx, stored: StoredJobEvent): Promise<void> {
  if (!isAuthentic(stored)) return;
  const { event, seq } = stored;
  switch (event.type) {
    case "job.accepted":
      if (event.accepted) await accepted(trx, seq, event, event.accepted);
      return;
    case "job.started":
      await trx.updateTable("job_list").set({ status: "rendering" }).where("job_id", "=", event.jobId).where("status", "=", "queued").execute();
      return;
    case "job.succeeded":
    case "job.failed":
      await ended(trx, seq, event);
      return;
    case "job.webhook_attempted":
      if (event.webhookAttempted) await attempted(trx, seq, event, event.webhookAttempted);
      return;
    case "job.webhook_replay_requested":
      if (event.webhookReplayRequested) await replayRequested(trx, seq, event, event.webhookReplayRequested.attempt);
      return;
    case "job.webhook_exhausted":
      // Given up before an attempt (the window ended, the key is gone): the pending first attempt failed.
      await trx
        .updateTable("deliveries")
        .set({ status: "failed", next_retry_at: null })
        .where("job_id", "=", event.jobId)
        .where("status", "=", "pending")
        .where("replay", "=", false)
        .execute();
      return;
  }
}

async function accepted(trx: Trx, seq: number, event: jobEventsV1.JobEvent, a: jobEventsV1.JobAccepted): Promise<void> {
  await trx
    .insertInto("job_list")
    .values({
      job_id: event.jobId,
      key_id: event.keyId,
      accepted_seq: seq,
      kind: a.kind === jobEventsV1.JobKind.JOB_KIND_IMAGE ? "image" : "render",
      template_id: a.templateId || null,
      status: "queued",
      created_at: event.time,
      callback: Boolean(a.webhookUrl),
    })
    .onConflict((oc) => oc.column("job_id").doNothing())
    .execute();
}

async function ended(trx: Trx, seq: number, event: jobEventsV1.JobEvent): Promise<void> {
  const succeeded = event.type === "job.succeeded";
  const job = await trx
    .updateTable("job_list")
    .set({ status: succeeded ? "succeeded" : "failed", finished_at: event.time, terminal_event_id: event.id, terminal_event_type: event.type })
    .where("job_id", "=", event.jobId)
    .where("status", "in", ["queued", "rendering"])
    .returning(["key_id", "callback"])
    .executeTakeFirst();
  if (!job) return;
  const counts = { succeeded: succeeded ? 1 : 0, failed: succeeded ? 0 : 1, refunded: !succeeded && event.failed?.refund ? 1 : 0 };
  await trx
    .insertInto("job_days")
    .values({ key_id: job.key_id, day: day(event.time), ...counts })
    .onConflict((oc) =>
      oc.columns(["key_id", "day"]).doUpdateSet({
        succeeded: sql`job_days.succeeded + excluded.succeeded`,
        failed: sql`job_days.failed + excluded.failed`,
        refunded: sql`job_days.refunded + excluded.refunded`,
      }),
    )
    .execute();
  if (job.callback)
    await insertDelivery(trx, pending({ keyId: job.key_id, jobId: event.jobId, eventId: event.id, eventType: event.type, attempt: 1, seq, at: event.time }));
}

/** A delivery not attempted yet: the callback's first, or a replay. */
export function pending(d: { keyId: string; jobId: string; eventId: string; eventType: string; attempt: number; seq: number; at: string; replay?: boolean }) {
  return {
    id: deliveryId(d.eventId, d.attempt),
    key_id: d.keyId,
    job_id: d.jobId,
    event_id: d.eventId,
    event_type: d.eventType,
    attempt: d.attempt,
    status: "pending" as DeliveryRow["status"],
    response_status: null,
    duration_ms: null,
    created_at: d.at,
    next_retry_at: null,
    seq: d.seq,
    replay: d.replay ?? false,
  };
}

/** Inserts a delivery unless it is there already (made by the projection, or by a replay's answer). */
export async function insertDelivery(trx: Trx, row: ReturnType<typeof pending>): Promise<void> {
  await trx
    .insertInto("deliveries")
    .values(row)
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
}

/** The outcome of a job whose callback is delivered: its terminal event. */
async function callbackOf(trx: Trx, jobId: string) {
  return trx
    .selectFrom("job_list")
    .select(["key_id", "terminal_event_id", "terminal_event_type"])
    .where("job_id", "=", jobId)
    .where("terminal_event_id", "is not", null)
    .executeTakeFirst();
}

async function attempted(trx: Trx, seq: number, event: jobEventsV1.JobEvent, a: jobEventsV1.WebhookAttempted): Promise<void> {
  const job = await callbackOf(trx, event.jobId);
  if (!job) return;
  const made = {
    status: (a.status >= 200 && a.status < 300 ? "succeeded" : "failed") as DeliveryRow["status"],
    response_status: a.status || null,
    duration_ms: a.durationMs,
    next_retry_at: a.nextAttemptAt || null,
  };
  const row = {
    ...pending({
      keyId: job.key_id,
      jobId: event.jobId,
      eventId: job.terminal_event_id!,
      eventType: job.terminal_event_type!,
      attempt: a.attempt,
      seq,
      at: event.time,
    }),
    ...made,
    replay: a.replay,
  };
  await trx
    .insertInto("deliveries")
    .values(row)
    .onConflict((oc) => oc.column("id").doUpdateSet(made))
    .execute();
}

async function replayRequested(trx: Trx, seq: number, event: jobEventsV1.JobEvent, attempt: number): Promise<void> {
  const job = await callbackOf(trx, event.jobId);
  if (!job) return;
  const { key_id: keyId, terminal_event_id: eventId, terminal_event_type: eventType } = job;
  await insertDelivery(trx, pending({ keyId, jobId: event.jobId, eventId: eventId!, eventType: eventType!, attempt, seq, at: event.time, replay: true }));
}

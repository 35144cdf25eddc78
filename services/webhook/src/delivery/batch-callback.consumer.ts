import { EventConsumer, consumers, streams, subjects, type Logger } from "@pressroom/platform";
import { decodeBatchEvent, type BatchCompleted } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { JetStreamClient, JsMsg } from "nats";
import type { WebhookDb } from "../db";
import { USER_AGENT, signatureHeaders } from "./callback";
import { errorOf, type SecretSource } from "./delivery.consumer";
import { tryLockDelivery } from "./delivery.repository";
import type { Poster } from "./http";
import { nextStep, parseRetryAfter, type RetryPolicy } from "./schedule";

export interface BatchCallbackDeps {
  js: JetStreamClient;
  db: Kysely<WebhookDb>;
  logger: Logger;
  poster: Poster;
  secrets: SecretSource;
  policy: RetryPolicy;
  concurrency: number;
}

type Disposition = { ack: true } | { nakMs: number };

const DUE_SLACK_MS = 250;
const BUSY_RETRY_MS = 2_000;
const SECRET_RETRY_MS = 5_000;
const HEARTBEAT_MS = 10_000;

/** The callback's body: exactly these fields, in this order (the API reference's BatchCompletedEvent). */
export function batchCallbackBody(event: BatchCompleted): string {
  return JSON.stringify({ id: event.id, type: "batch.completed", created_at: event.created_at, batch: event.batch });
}

/**
 * Calls a batch back once when it ended (durable `webhook-batch-callbacks` on BATCHES, one
 * batch.completed message per batch): signed as a job's callback, with the same retries (a
 * failed attempt naks the message with the delay until the next one; the window counts from
 * the batch's end; 410 and a refused target stop it).
 *
 * Once per batch: the first copy of its event makes its row (keyed by the batch id, the body
 * kept as sent); every attempt runs under the callback's advisory lock and re-reads the row, so
 * a copy (a redelivery, another replica, an event announced again) finds the callback made,
 * scheduled or under way and makes no attempt of its own.
 */
export class BatchCallbackConsumer extends EventConsumer<BatchCompleted> {
  constructor(private readonly deps: BatchCallbackDeps) {
    super(
      { js: deps.js, stream: streams.BATCHES, consumer: consumers.webhookBatchCallbacks, concurrency: deps.concurrency },
      {
        spanSubject: subjects.batchCompleted,
        logger: deps.logger,
        decode: (msg) => decodeBatchEvent("batch.completed", msg.data),
        attributes: (event) => ({ "pressroom.batch.id": event.batch.id, "pressroom.event.id": event.id }),
      },
    );
  }

  protected onError(err: unknown, msg: JsMsg): void {
    this.deps.logger.warn({ err, seq: msg.seq }, "batch callback step failed; will look again");
    msg.nak(BUSY_RETRY_MS);
  }

  protected async apply(event: BatchCompleted, msg: JsMsg): Promise<void> {
    const heartbeat = setInterval(() => msg.working(), HEARTBEAT_MS);
    let disposition: Disposition;
    try {
      await this.deps.db
        .insertInto("batch_callbacks")
        .values({
          batch_id: event.batch.id,
          callback_id: event.id,
          key_id: event.key_id,
          url: event.webhook_url,
          body: batchCallbackBody(event),
          ended_at: new Date(event.created_at),
        })
        .onConflict((oc) => oc.column("batch_id").doNothing())
        .execute();
      disposition = await this.deps.db.transaction().execute(async (trx) => {
        if (!(await tryLockDelivery(trx, event.id))) return { nakMs: BUSY_RETRY_MS };
        return this.step(trx, event.batch.id);
      });
    } finally {
      clearInterval(heartbeat);
    }
    if ("ack" in disposition) msg.ack();
    else msg.nak(disposition.nakMs);
  }

  /** One step of the batch's callback: wait more, attempt, or stop. */
  private async step(db: Kysely<WebhookDb>, batchId: string): Promise<Disposition> {
    const { logger, policy } = this.deps;
    const row = await db.selectFrom("batch_callbacks").selectAll().where("batch_id", "=", batchId).executeTakeFirstOrThrow();
    if (row.state !== "pending") return { ack: true };
    const now = Date.now();
    if (row.next_attempt_at && row.next_attempt_at.getTime() - now > DUE_SLACK_MS) return { nakMs: row.next_attempt_at.getTime() - now };
    const log = { batchId, attempt: row.attempts + 1 };
    const stop = async (reason: string) => {
      await db
        .updateTable("batch_callbacks")
        .set({ state: "exhausted", last_error: reason, next_attempt_at: null, updated_at: new Date() })
        .where("batch_id", "=", batchId)
        .execute();
      logger.warn({ ...log, reason }, "batch callback stopped");
      return { ack: true } as const;
    };
    if (row.attempts === 0 && now > row.ended_at.getTime() + policy.windowMs) return stop("the retry window ended before the first attempt");

    let secrets: string[] | undefined;
    try {
      secrets = await this.deps.secrets.get(row.key_id);
    } catch (err) {
      logger.warn({ err, batchId }, "could not read the webhook secret; will retry");
      return { nakMs: SECRET_RETRY_MS };
    }
    if (!secrets) return stop("the API key no longer exists");

    const headers = {
      "Content-Type": "application/json",
      "User-Agent": USER_AGENT,
      ...signatureHeaders({ eventId: row.callback_id, body: row.body, secrets, timestampSeconds: Math.floor(now / 1_000) }),
    };
    const result = await this.deps.poster.post(row.url, row.body, headers);
    const attempts = row.attempts + 1;
    const error = errorOf(result);
    const recorded = { attempts, last_status: result.status, last_error: error || null, updated_at: new Date() };
    if (result.status >= 200 && result.status < 300) {
      await db
        .updateTable("batch_callbacks")
        .set({ ...recorded, state: "delivered", next_attempt_at: null })
        .where("batch_id", "=", batchId)
        .execute();
      logger.info({ ...log, status: result.status }, "batch callback delivered");
      return { ack: true };
    }
    await db.updateTable("batch_callbacks").set(recorded).where("batch_id", "=", batchId).execute();
    if (result.status === 410) return stop("the receiver answered 410 Gone");
    if (result.permanent) return stop(error);
    const step = nextStep(policy, {
      attempt: attempts,
      finishedAt: row.ended_at,
      now: new Date(),
      retryAfterMs: parseRetryAfter(result.retryAfter, Date.now()),
    });
    if (step.kind === "exhausted") return stop(step.reason);
    await db.updateTable("batch_callbacks").set({ next_attempt_at: step.at }).where("batch_id", "=", batchId).execute();
    logger.info({ ...log, status: result.status, error, nextAttemptAt: step.at.toISOString() }, "batch callback attempt failed; retry scheduled");
    return { nakMs: Math.max(0, step.at.getTime() - Date.now()) };
  }
}

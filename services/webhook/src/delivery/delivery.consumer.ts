import { EventConsumer, consumers, streams, subjects, type Logger } from "@pressroom/platform";
import {
  decodeWebhookDelivery,
  jobEvent,
  loadJob,
  nextScheduledAttempt,
  type JobEvent,
  type JobState,
  type WebhookDelivery,
  type WebhookReplay,
} from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { JetStreamClient, JetStreamManager, JsMsg } from "nats";
import type { WebhookDb } from "../db";
import { USER_AGENT, callbackBody, signatureHeaders } from "./callback";
import { tryLockDelivery } from "./delivery.repository";
import type { Poster, PostResult } from "./http";
import { appendAfter } from "./job-log";
import { recordDeliveryEvents } from "./metrics";
import { nextStep, parseRetryAfter, type RetryPolicy } from "./schedule";

/**
 * Where the key's webhook secrets come from (identity's GetWebhookSecret): the
 * current one first, then the one a rotation replaced while it is still in
 * use. Undefined: the key no longer exists.
 */
export interface SecretSource {
  get(keyId: string): Promise<string[] | undefined>;
}

export interface DeliveryDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  db: Kysely<WebhookDb>;
  logger: Logger;
  poster: Poster;
  secrets: SecretSource;
  policy: RetryPolicy;
  concurrency: number;
  /** Deliveries of one API key in flight at once here; the key's others wait their turn in the queue. */
  perKeyConcurrency: number;
}

/** What to do with the WEBHOOKS message once the handler is done. */
type Disposition = { ack: true } | { nakMs: number } | { term: string };

const SOURCE = "webhook";
/** A due time this close is attempted now rather than waited for. */
const DUE_SLACK_MS = 250;
/** Wait before looking again when another handler holds the delivery, or a dependency failed. */
const BUSY_RETRY_MS = 2_000;
const SECRET_RETRY_MS = 5_000;
/** How often a handler tells JetStream it is still working on the message. */
const HEARTBEAT_MS = 10_000;
/** Wait before looking again at a delivery whose key already has its share in flight. */
const KEY_BUSY_RETRY_MS = 500;
/**
 * A callback's message is published just before its job's outcome is appended, and a replay's just
 * before its request is (appendOutcome of @pressroom/domain, replay.ts): how long a message whose
 * event is not (yet) in the job's history is looked at again before it is dropped.
 */
const APPEND_WAIT_MS = 60_000;
/** How soon a message that came before its job's outcome is looked at again: soon at first (the append is a moment behind), then seldom. */
const outcomeRetryMs = (sincePublishedMs: number) => (sincePublishedMs < 1_000 ? 100 : 2_000);

/**
 * Delivers callbacks from the WEBHOOKS work queue (durable
 * `webhook-delivery`). Each message is one job's callback; the schedule lives
 * in JetStream (a failed attempt naks the message with the delay until the
 * next one) and in the job's events (every attempt is recorded as
 * job.webhook_attempted with its next_attempt_at). A message that comes back
 * early (after a crash, an ack_wait expiry or a server restart) finds the due
 * time in the job's history and is put back until then, so each attempt
 * happens once and on schedule, whichever replica or process runs it.
 *
 * Exclusivity: an attempt runs under a Postgres advisory lock on the event id
 * (held by a transaction, so a crash releases it), and re-reads the job's
 * events after taking it.
 *
 * Fairness: one key has at most `perKeyConcurrency` deliveries in flight here;
 * a message of a key at its share goes straight back to the queue (not an
 * attempt), so a slow or dead endpoint cannot take every slot of the replica.
 */
export class DeliveryConsumer extends EventConsumer<WebhookDelivery> {
  private readonly inFlightByKey = new Map<string, number>();

  constructor(private readonly deps: DeliveryDeps) {
    super(
      { js: deps.js, stream: streams.WEBHOOKS, consumer: consumers.webhookDelivery, concurrency: deps.concurrency },
      {
        spanSubject: subjects.webhookDelivery,
        logger: deps.logger,
        decode: (msg) => decodeWebhookDelivery(msg.data),
        attributes: (message) => ({ "pressroom.job.id": message.job_id, "pressroom.event.id": message.event_id }),
      },
    );
  }

  protected onError(err: unknown, msg: JsMsg): void {
    this.deps.logger.warn({ err, seq: msg.seq }, "webhook delivery step failed; will look again");
    msg.nak(BUSY_RETRY_MS);
  }

  protected async apply(message: WebhookDelivery, msg: JsMsg): Promise<void> {
    const held = this.inFlightByKey.get(message.key_id) ?? 0;
    if (held >= this.deps.perKeyConcurrency) {
      msg.nak(KEY_BUSY_RETRY_MS);
      return;
    }
    this.inFlightByKey.set(message.key_id, held + 1);
    try {
      await this.handleOwn(msg, message);
    } finally {
      const left = (this.inFlightByKey.get(message.key_id) ?? 1) - 1;
      if (left > 0) this.inFlightByKey.set(message.key_id, left);
      else this.inFlightByKey.delete(message.key_id);
    }
  }

  private async handleOwn(msg: JsMsg, message: WebhookDelivery): Promise<void> {
    const heartbeat = setInterval(() => msg.working(), HEARTBEAT_MS);
    let disposition: Disposition;
    try {
      const publishedAtMs = Number(BigInt(msg.info.timestampNanos) / 1_000_000n);
      disposition = await this.underLock(message.event_id, () => this.deliver(message, publishedAtMs));
    } finally {
      clearInterval(heartbeat);
    }
    if ("ack" in disposition) msg.ack();
    else if ("term" in disposition) msg.term(disposition.term);
    else msg.nak(disposition.nakMs);
  }

  private underLock(eventId: string, fn: () => Promise<Disposition>): Promise<Disposition> {
    return this.deps.db.transaction().execute(async (trx) => {
      if (!(await tryLockDelivery(trx, eventId))) return { nakMs: BUSY_RETRY_MS };
      return fn();
    });
  }

  /** One step of one delivery: wait more, attempt, or drop the message. */
  private async deliver(message: WebhookDelivery, publishedAtMs: number): Promise<Disposition> {
    const { logger } = this.deps;
    const job = await loadJob(this.deps.jsm, message.job_id);
    if (!job) {
      logger.error({ jobId: message.job_id }, "webhook delivery for a job without events; dropping it");
      return { term: "job not found" };
    }
    const body = callbackBody(job);
    // Scheduled, its outcome not appended yet (or never: the attempt that scheduled it died first).
    const sincePublishedMs = Date.now() - publishedAtMs;
    if (!body && sincePublishedMs < APPEND_WAIT_MS) return { nakMs: outcomeRetryMs(sincePublishedMs) };
    if (!body || body.eventId !== message.event_id || !job.webhookUrl) {
      logger.warn({ jobId: job.id, eventId: message.event_id }, "webhook delivery does not match the job's outcome; dropping it");
      return { ack: true };
    }
    if (message.replay_id) return this.replay(job, body, message.replay_id, publishedAtMs);
    if (job.webhook.state === "delivered" || job.webhook.state === "exhausted") return { ack: true };

    const scheduled = job.webhook.scheduledAttempts;
    if (scheduled > 0 && !job.webhook.nextAttemptAt) {
      // The last attempt was final (only final attempts have no next one),
      // but the process died before recording its conclusion: record it now
      // instead of calling again.
      const status = job.webhook.lastStatus ?? 0;
      const reason = status === 410 ? "the receiver answered 410 Gone" : "stopped after the last attempt";
      const conclusion =
        status >= 200 && status < 300
          ? this.event(job, { webhookDelivered: { attempt: job.webhook.lastScheduledAttempt, status } })
          : this.event(job, { webhookExhausted: { attempts: scheduled, reason } });
      await this.record(job, job.lastSeqOf.webhook, [conclusion]);
      return { ack: true };
    }

    const now = Date.now();
    const due = job.webhook.nextAttemptAt ? Date.parse(job.webhook.nextAttemptAt) : now;
    if (Number.isFinite(due) && due - now > DUE_SLACK_MS) return { nakMs: due - now };

    const attempt = nextScheduledAttempt(job);
    const lastSeq = job.lastSeqOf.webhook;

    // A job that finished before its retry window ended unseen (the service
    // was down, or did not exist yet, for longer than the window) is not
    // called back out of the blue days later.
    const windowEnd = Date.parse(job.finishedAt ?? job.createdAt) + this.deps.policy.windowMs;
    if (scheduled === 0 && now > windowEnd) {
      await this.record(job, lastSeq, [this.event(job, { webhookExhausted: { attempts: 0, reason: "the retry window ended before the first attempt" } })]);
      logger.warn({ jobId: job.id }, "webhook dropped: its retry window ended before the first attempt");
      return { ack: true };
    }

    const secrets = await this.secretsOf(job);
    if (secrets === "unavailable") return { nakMs: SECRET_RETRY_MS };
    if (secrets === undefined) {
      await this.record(job, lastSeq, [this.event(job, { webhookExhausted: { attempts: scheduled, reason: "the API key no longer exists" } })]);
      logger.warn({ jobId: job.id }, "webhook dropped: the key no longer exists");
      return { ack: true };
    }

    const result = await this.post(job, body, secrets);
    return this.settle(job, lastSeq, attempt, result);
  }

  /**
   * The key's secrets; undefined when the key no longer exists; "unavailable" when identity could
   * not tell (our side is down: no attempt, look again shortly).
   */
  private async secretsOf(job: JobState): Promise<string[] | undefined | "unavailable"> {
    try {
      return await this.deps.secrets.get(job.keyId);
    } catch (err) {
      this.deps.logger.warn({ err, jobId: job.id }, "could not read the webhook secret; will retry");
      return "unavailable";
    }
  }

  /** One POST of the callback, signed now with the key's secrets, timed. */
  private async post(job: JobState, body: { eventId: string; text: string }, secrets: string[]): Promise<PostResult & { durationMs: number }> {
    const headers = {
      "Content-Type": "application/json",
      "User-Agent": USER_AGENT,
      ...signatureHeaders({ eventId: body.eventId, body: body.text, secrets, timestampSeconds: Math.floor(Date.now() / 1_000) }),
    };
    const started = performance.now();
    const result = await this.deps.poster.post(job.webhookUrl, body.text, headers);
    return { ...result, durationMs: Math.round(performance.now() - started) };
  }

  /**
   * A replay's one attempt: the same body and event id as every attempt, signed afresh. Made once
   * (its request is marked attempted in the job's history); never retried, and it leaves the
   * callback's own schedule alone.
   */
  private async replay(job: JobState, body: { eventId: string; text: string }, requestId: string, publishedAtMs: number): Promise<Disposition> {
    const { logger } = this.deps;
    const request: WebhookReplay | undefined = job.webhook.replays.find((r) => r.id === requestId);
    if (!request) {
      if (Date.now() - publishedAtMs < APPEND_WAIT_MS) return { nakMs: 1_000 };
      logger.warn({ jobId: job.id, requestId }, "a replay whose request never reached the job's history; dropping it");
      return { ack: true };
    }
    if (request.attempted) return { ack: true };
    const secrets = await this.secretsOf(job);
    if (secrets === "unavailable") return { nakMs: SECRET_RETRY_MS };
    const result = secrets ? await this.post(job, body, secrets) : { status: 0, error: "the API key no longer exists", durationMs: 0 };
    const attempted = {
      attempt: request.attempt,
      status: result.status,
      error: errorOf(result),
      nextAttemptAt: "",
      durationMs: result.durationMs,
      replay: true,
    };
    await this.record(job, job.lastSeqOf.webhook, [this.event(job, { webhookAttempted: attempted })]);
    logger.info({ jobId: job.id, attempt: request.attempt, status: result.status }, "webhook replayed");
    return { ack: true };
  }

  /** Records the attempt and what follows it; returns what to do with the message. */
  private async settle(job: JobState, lastSeq: number, attempt: number, result: PostResult & { durationMs: number }): Promise<Disposition> {
    const { logger, policy } = this.deps;
    const status = result.status;
    const error = errorOf(result);
    const { durationMs } = result;
    const made = job.webhook.scheduledAttempts + 1;
    const log = { jobId: job.id, attempt, status };

    if (status >= 200 && status < 300) {
      await this.record(job, lastSeq, [
        this.event(job, { webhookAttempted: { attempt, status, error: "", nextAttemptAt: "", durationMs } }),
        this.event(job, { webhookDelivered: { attempt, status } }),
      ]);
      logger.info(log, "webhook delivered");
      return { ack: true };
    }

    let stop: string | undefined;
    let nextAt: Date | undefined;
    if (status === 410) stop = "the receiver answered 410 Gone";
    else if (result.permanent) stop = error;
    else {
      const now = new Date();
      const step = nextStep(policy, {
        attempt: made,
        finishedAt: new Date(job.finishedAt ?? job.createdAt),
        now,
        retryAfterMs: parseRetryAfter(result.retryAfter, now.getTime()),
      });
      if (step.kind === "retry") nextAt = step.at;
      else stop = step.reason;
    }

    const attempted = this.event(job, { webhookAttempted: { attempt, status, error, nextAttemptAt: nextAt?.toISOString() ?? "", durationMs } });
    if (nextAt) {
      await this.record(job, lastSeq, [attempted]);
      logger.info({ ...log, error, nextAttemptAt: nextAt.toISOString() }, "webhook attempt failed; retry scheduled");
      return { nakMs: Math.max(0, nextAt.getTime() - Date.now()) };
    }
    await this.record(job, lastSeq, [attempted, this.event(job, { webhookExhausted: { attempts: made, reason: stop ?? "stopped" } })]);
    logger.warn({ ...log, error, reason: stop }, "webhook delivery stopped");
    return { ack: true };
  }

  private event(job: JobState, data: Omit<Parameters<typeof jobEvent>[1], "jobId" | "keyId" | "source">): JobEvent {
    const type = data.webhookDelivered ? "job.webhook_delivered" : data.webhookExhausted ? "job.webhook_exhausted" : "job.webhook_attempted";
    return jobEvent(type, { jobId: job.id, keyId: job.keyId, source: SOURCE, ...data });
  }

  /**
   * Appends the events in order, each after the previous one. A NATS blip
   * (a server restart) is ridden out for a few seconds, so an attempt that
   * was made is not made again just because recording it failed once.
   */
  private async record(job: JobState, lastSeq: number, events: JobEvent[]): Promise<void> {
    let seq = lastSeq;
    for (const event of events) {
      for (let tries = 1; ; tries++) {
        try {
          seq = await appendAfter(this.deps, event, seq);
          break;
        } catch (err) {
          if (tries >= 10) throw err;
          this.deps.logger.warn({ err, jobId: job.id, type: event.type }, "recording a webhook event failed; retrying");
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
    }
    recordDeliveryEvents(job, events);
  }
}

/** Why an attempt failed, for the job's history: the transport's reason, or the HTTP status the receiver answered ("" when delivered). */
export function errorOf(result: PostResult): string {
  if (result.error !== undefined) return result.error;
  if (result.status >= 300 && result.status < 400) return `the receiver answered HTTP ${result.status}: redirects are not followed`;
  return result.status >= 400 ? `the receiver answered HTTP ${result.status}` : "";
}

import type { KeyObject } from "node:crypto";
import { jobEventsV1 } from "@pressroom/contracts";
import { EventConsumer, consumers, streams, subjects, type Logger } from "@pressroom/platform";
import { isTerminal, jobEvent, loadJob, openDestination, type DestinationSecrets, type JobEvent, type JobState } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { JetStreamClient, JetStreamManager, JsMsg, NatsConnection } from "nats";
import type { WebhookDb } from "../db";
import { tryLockDelivery } from "../delivery/delivery.repository";
import type { Poster, PostResult } from "../delivery/http";
import { appendAfter } from "../delivery/job-log";
import { nextStep, parseRetryAfter, type RetryPolicy } from "../delivery/schedule";
import type { OutputReader } from "./output-reader";

export interface DestinationDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  db: Kysely<WebhookDb>;
  logger: Logger;
  poster: Poster;
  outputs: OutputReader;
  /** The webhook service's private sealing key (DESTINATION_SEALING_KEY): it opens each message's sealed destination (openDestination). */
  sealingKey: KeyObject;
  /** The callbacks' retry schedule, its window starting when the job was rendered. */
  policy: RetryPolicy;
  concurrency: number;
  /** Destinations of one API key in flight at once here, as for callbacks. */
  perKeyConcurrency: number;
}

type Disposition = { ack: true } | { nakMs: number } | { term: string };

const SOURCE = "webhook";
export const DESTINATION_USER_AGENT = "Pressroom-Destinations/1.0";
const DUE_SLACK_MS = 250;
const BUSY_RETRY_MS = 2_000;
/** Storage could not be read (ours): no attempt, look again after this. */
const OUTPUT_RETRY_MS = 5_000;
/** How often the job's end is looked for (and render asked again) once the destination settled. */
const SETTLE_RETRY_MS = 1_000;
const KEY_BUSY_RETRY_MS = 500;
const HEARTBEAT_MS = 10_000;

/**
 * PUTs a rendered job's output to its destination, from the DESTINATIONS
 * work queue (durable `destination-delivery`; render publishes one message
 * per rendered job with a destination). The message holds the destination's
 * url and headers sealed to this service's key, as the gateway sealed them:
 * they are opened here, for each attempt, and nowhere else; it is acked (and
 * so deleted) once the job has ended. A destination that does not open (keys
 * out of step, another job's) is given up at once, as one that never accepts.
 * Each attempt reads the output from
 * storage (GetOutput, with the output's signed URL), PUTs it through the
 * poster's network guard and records job.destination_attempted (status,
 * duration, host, never the path or query); the schedule is the callbacks'
 * (schedule.ts), naked on JetStream like theirs and kept in the job's events.
 * A 2xx records job.destination_delivered, giving up job.destination_exhausted;
 * then render is asked to end the job (subjects.destinationSettled) until its
 * end is in the job's history. Exclusive per job under an advisory lock.
 */
export class DestinationConsumer extends EventConsumer<jobEventsV1.DestinationDelivery> {
  private readonly inFlightByKey = new Map<string, number>();

  constructor(private readonly deps: DestinationDeps) {
    super(
      { js: deps.js, stream: streams.DESTINATIONS, consumer: consumers.destinationDelivery, concurrency: deps.concurrency },
      {
        spanSubject: subjects.destinationDelivery,
        logger: deps.logger,
        decode: (msg) => jobEventsV1.DestinationDelivery.decode(msg.data),
        attributes: (message) => ({ "pressroom.job.id": message.jobId }),
      },
    );
  }

  protected onError(err: unknown, msg: JsMsg): void {
    this.deps.logger.warn({ err, seq: msg.seq }, "destination delivery step failed; will look again");
    msg.nak(BUSY_RETRY_MS);
  }

  protected async apply(message: jobEventsV1.DestinationDelivery, msg: JsMsg): Promise<void> {
    const held = this.inFlightByKey.get(message.keyId) ?? 0;
    if (held >= this.deps.perKeyConcurrency) {
      msg.nak(KEY_BUSY_RETRY_MS);
      return;
    }
    this.inFlightByKey.set(message.keyId, held + 1);
    const heartbeat = setInterval(() => msg.working(), HEARTBEAT_MS);
    let disposition: Disposition;
    try {
      disposition = await this.deps.db.transaction().execute(async (trx) => {
        if (!(await tryLockDelivery(trx, `destination:${message.jobId}`))) return { nakMs: BUSY_RETRY_MS };
        return this.deliver(message);
      });
    } finally {
      clearInterval(heartbeat);
      const left = (this.inFlightByKey.get(message.keyId) ?? 1) - 1;
      if (left > 0) this.inFlightByKey.set(message.keyId, left);
      else this.inFlightByKey.delete(message.keyId);
    }
    if ("ack" in disposition) msg.ack();
    else if ("term" in disposition) msg.term(disposition.term);
    else msg.nak(disposition.nakMs);
  }

  /** One step: wait, attempt, ask render to end the job, or drop the message once it has ended. */
  private async deliver(message: jobEventsV1.DestinationDelivery): Promise<Disposition> {
    const { logger } = this.deps;
    const job = await loadJob(this.deps.jsm, message.jobId);
    if (!job) {
      logger.error({ jobId: message.jobId }, "destination delivery for a job without events; dropping it");
      return { term: "job not found" };
    }
    if (isTerminal(job.status)) return { ack: true };
    const destination = job.destination;
    if (!destination?.rendered || !destination.renderedAt) {
      logger.warn({ jobId: job.id }, "destination delivery for a job that is not rendered with a destination; dropping it");
      return { ack: true };
    }
    if (destination.state !== "pending") return this.askToEnd(job, message);

    const now = Date.now();
    const due = destination.nextAttemptAt ? Date.parse(destination.nextAttemptAt) : now;
    if (Number.isFinite(due) && due - now > DUE_SLACK_MS) return { nakMs: due - now };

    let target: DestinationSecrets;
    try {
      target = openDestination(this.deps.sealingKey, job.id, message.sealedDestination);
    } catch {
      // Ours, and no retry mends it: the job ends as for a destination that never accepts, the reason logged without the sealed value.
      logger.error(
        { jobId: job.id, host: destination.host },
        "the destination's sealed url and headers do not open with this service's key (DESTINATION_SEALING_KEY); giving it up",
      );
      await this.record(job, [this.exhausted(job, destination.attempts, "its sealed url and headers could not be opened")]);
      return this.askToEnd(job, message);
    }

    let output: Uint8Array | "gone";
    try {
      output = await this.deps.outputs.read(destination.rendered.url);
    } catch (err) {
      logger.warn({ err, jobId: job.id }, "could not read the output for its destination; will retry");
      return { nakMs: OUTPUT_RETRY_MS };
    }
    if (output === "gone") {
      await this.record(job, [this.exhausted(job, destination.attempts, "the output expired before the destination accepted it")]);
      return this.askToEnd(job, message);
    }
    const headers = { "Content-Type": destination.rendered.contentType, "User-Agent": DESTINATION_USER_AGENT, ...target.headers };
    const started = performance.now();
    const result = await this.deps.poster.put(target.url, output, headers);
    return this.settle(job, message, result, Math.round(performance.now() - started));
  }

  /** Records the attempt and what follows it. */
  private async settle(job: JobState, message: jobEventsV1.DestinationDelivery, result: PostResult, durationMs: number): Promise<Disposition> {
    const destination = job.destination!;
    const attempt = destination.attempts + 1;
    const { status } = result;
    const error = errorOf(result);
    const log = { jobId: job.id, host: destination.host, attempt, status, durationMs };
    const attempted = (nextAttemptAt = "") =>
      this.event(job, "job.destination_attempted", { destinationAttempted: { attempt, status, error, nextAttemptAt, durationMs, host: destination.host } });

    if (status >= 200 && status < 300) {
      await this.record(job, [attempted(), this.event(job, "job.destination_delivered", { destinationDelivered: { attempt, status } })]);
      this.deps.logger.info(log, "output delivered to its destination");
      return this.askToEnd(job, message);
    }
    let stop: string | undefined;
    let nextAt: Date | undefined;
    if (status === 410) stop = "the destination answered 410 Gone";
    else if (result.permanent) stop = error;
    else {
      const now = new Date();
      const step = nextStep(this.deps.policy, {
        attempt,
        finishedAt: new Date(destination.renderedAt!),
        now,
        retryAfterMs: parseRetryAfter(result.retryAfter, now.getTime()),
      });
      if (step.kind === "retry") nextAt = step.at;
      else stop = step.reason;
    }
    if (nextAt) {
      await this.record(job, [attempted(nextAt.toISOString())]);
      this.deps.logger.info({ ...log, error, nextAttemptAt: nextAt.toISOString() }, "destination attempt failed; retry scheduled");
      return { nakMs: Math.max(0, nextAt.getTime() - Date.now()) };
    }
    await this.record(job, [attempted(), this.exhausted(job, attempt, stop ?? "stopped")]);
    this.deps.logger.warn({ ...log, error, reason: stop }, "destination given up");
    return this.askToEnd(job, message);
  }

  /** Asks render to end the job (it checks the job itself); the message comes back until the end is in the job's history. */
  private askToEnd(job: JobState, message: jobEventsV1.DestinationDelivery): Disposition {
    this.deps.nc.publish(subjects.destinationSettled, jobEventsV1.DestinationSettled.encode({ jobId: job.id, outcomeInbox: message.outcomeInbox }).finish());
    return { nakMs: SETTLE_RETRY_MS };
  }

  private exhausted(job: JobState, attempts: number, reason: string): JobEvent {
    return this.event(job, "job.destination_exhausted", { destinationExhausted: { attempts, reason } });
  }

  private event(
    job: JobState,
    type: "job.destination_attempted" | "job.destination_delivered" | "job.destination_exhausted",
    data: Omit<Parameters<typeof jobEvent>[1], "jobId" | "keyId" | "source">,
  ): JobEvent {
    return jobEvent(type, { jobId: job.id, keyId: job.keyId, source: SOURCE, ...data });
  }

  /** Appends the events in order after webhook's last one, riding out a NATS blip as callbacks do. */
  private async record(job: JobState, events: JobEvent[]): Promise<void> {
    let seq = job.lastSeqOf.webhook;
    for (const event of events) {
      for (let tries = 1; ; tries++) {
        try {
          seq = await appendAfter(this.deps, event, seq);
          break;
        } catch (err) {
          if (tries >= 10) throw err;
          this.deps.logger.warn({ err, jobId: job.id, type: event.type }, "recording a destination event failed; retrying");
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
    }
  }
}

/** Why an attempt failed, for the job's history: the transport's reason (never the URL) or the status; "" when accepted. */
function errorOf(result: PostResult): string {
  if (result.error !== undefined) return result.error;
  if (result.status >= 300 && result.status < 400) return `the destination answered HTTP ${result.status}: redirects are not followed`;
  return result.status >= 400 ? `the destination answered HTTP ${result.status}` : "";
}

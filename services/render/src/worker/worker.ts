import type { KeyObject } from "node:crypto";
import { jobEventsV1, type storageV1 } from "@pressroom/contracts";
import {
  AppError,
  EventConsumer,
  consumers,
  isWrongLastSequence,
  RENDER_ATTEMPTS,
  streams,
  subjects,
  SUBMIT_GIVE_UP_MS,
  type Logger,
} from "@pressroom/platform";
import {
  announceOutcome,
  appendJobEvent,
  appendOutcome,
  isTerminal,
  jobEvent,
  outcomeInboxOf,
  readJobEvents,
  readLastJobEvent,
  retainedAcceptance,
  foldJob,
  openJobSecrets,
  type AnnouncedOutput,
  type JobState,
} from "@pressroom/domain";
import type { JetStreamClient, JetStreamManager, JsMsg, NatsConnection } from "nats";
import { RenderFailure, type DocumentProducer, type ProducedDocument } from "../producer/producer";
import { deathsBefore, POISON_DEATHS, type AttemptLog } from "./attempts";
import { handOffDestination, renderedEventIdOf } from "./destination";
import { failureOf, poisonJob, worthRetrying } from "./failure";
import { jobMetrics } from "./metrics";

/** Stores an output's bytes and registers them with storage, which names it and signs its URL (storeOutput). */
export type OutputStore = (metadata: storageV1.OutputMetadata, data: Uint8Array) => Promise<storageV1.RegisterOutputResponse>;

export interface WorkerDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** What makes each job's document. */
  producer: DocumentProducer;
  /** How attempts that will be tried again ended, for every replica to count a job's deaths. */
  attempts: AttemptLog;
  store: OutputStore;
  /** The largest output announced with its bytes (see announcedOutput); 0: none. */
  announcedOutputMaxBytes: number;
  logger: Logger;
  workerName: string;
  slots: number;
  /** Render's private sealing key (SEALING_KEY): it opens the secrets the gateway sealed in each command (openJobSecrets). */
  sealingKey: KeyObject;
}

/** Room left in an announcement for the event and the framing around the output. */
const ANNOUNCEMENT_OVERHEAD_BYTES = 16 * 1024;

/** How often a long render tells JetStream it is still working on the message. */
const HEARTBEAT_MS = 10_000;

/** The job is not this delivery's to end: it ended already, or another delivery started it meanwhile. */
class StaleJob extends Error {}

/** A command stored after the gateway had given up on it (see SUBMIT_GIVE_UP_MS). */
class AbandonedCommand extends Error {}

/**
 * Consumes render commands from the RENDER work queue, at most `slots` at a
 * time, and drives each job through started → succeeded | failed with
 * optimistic appends, so a redelivered job can never succeed twice. The
 * document itself is the producer's: the worker hands it the request, stores
 * what it makes, and decides from how it failed whether to try again, charge
 * or refund.
 */
export class RenderWorker extends EventConsumer<jobEventsV1.RenderCommand> {
  /** The end of the queue of jobs that were in flight at a death: they run one at a time here. */
  private suspects: Promise<void> = Promise.resolve();

  constructor(private readonly deps: WorkerDeps) {
    super(
      { js: deps.js, nc: deps.nc, stream: streams.RENDER, consumer: consumers.renderWorkers, concurrency: deps.slots, prefetch: 0 },
      {
        spanSubject: subjects.renderRequested,
        logger: deps.logger,
        decode: (msg) => jobEventsV1.RenderCommand.decode(msg.data),
        attributes: (command, msg) => ({ "pressroom.job.id": command.jobId, "pressroom.attempt": msg.info.redeliveryCount }),
      },
    );
  }

  protected onError(err: unknown, msg: JsMsg): void {
    this.deps.logger.error({ err, seq: msg.seq }, "handling a render command failed; it will be redelivered");
    msg.nak(1_000);
  }

  protected async apply(command: jobEventsV1.RenderCommand, msg: JsMsg): Promise<void> {
    const attempt = msg.info.redeliveryCount;
    const deaths = attempt > 1 ? await this.deathsOf(command.jobId, attempt) : 0;
    if (deaths >= POISON_DEATHS) {
      this.deps.logger.warn({ jobId: command.jobId, deaths }, "a poison job: in flight at every death; failing it, charged");
      await this.settleFailure(msg, command, poisonJob(deaths));
      return;
    }
    if (attempt > RENDER_ATTEMPTS) {
      // Every attempt died (killed, out of memory) before recording an outcome: this delivery records it.
      this.deps.logger.error({ jobId: command.jobId, attempts: RENDER_ATTEMPTS }, "every render attempt died; failing the job");
      await this.settleFailure(msg, command, new Error(`all ${RENDER_ATTEMPTS} render attempts died`));
      return;
    }
    const heartbeat = setInterval(() => msg.working(), HEARTBEAT_MS);
    // A job that was in flight at a death runs while no other such job does on this worker (its
    // browser): a poison job's next death then catches no other job for the second time.
    const release = deaths > 0 ? await this.suspectTurn() : undefined;
    try {
      await this.process(command, attempt, msg.info.timestampNanos / 1e6);
      msg.ack();
    } catch (err) {
      if (err instanceof StaleJob) {
        msg.ack();
        return;
      }
      if (err instanceof AbandonedCommand) {
        this.deps.logger.warn({ jobId: command.jobId }, "render command stored after the gateway gave up on it; dropped");
        msg.ack();
        return;
      }
      const died = err instanceof RenderFailure && err.browserDied;
      if (died && deaths + 1 >= POISON_DEATHS) {
        this.deps.logger.warn({ jobId: command.jobId, deaths: deaths + 1 }, "a poison job: the browser died under it again; failing it, charged");
        await this.settleFailure(msg, command, poisonJob(deaths + 1));
      } else if (!worthRetrying(err) || attempt >= RENDER_ATTEMPTS) {
        await this.settleFailure(msg, command, err);
      } else {
        // Ours (a browser crash, a dependency down), or pages lost together: another attempt, on this worker or another.
        this.deps.logger.warn({ err, jobId: command.jobId, attempt }, "render failed on our side; redelivering");
        // Unwritten, the attempt counts as a death at the next delivery: logged, and tried again all the same.
        await this.deps.attempts
          .record(command.jobId, attempt, died ? "died" : "retried")
          .catch((recordErr: unknown) => this.deps.logger.error({ err: recordErr, jobId: command.jobId }, "could not record how the attempt ended"));
        msg.nak(err instanceof RenderFailure && attempt === 1 ? 250 : 1_000 * attempt);
      }
    } finally {
      clearInterval(heartbeat);
      release?.();
    }
  }

  /**
   * The deaths the job was in flight at before this attempt. Unreadable (the database down), none:
   * the job is tried as before, rather than left without an outcome when its deliveries run out.
   */
  private async deathsOf(jobId: string, attempt: number): Promise<number> {
    try {
      const [history, ends] = await Promise.all([readJobEvents(this.deps.jsm, jobId), this.deps.attempts.ends(jobId)]);
      return deathsBefore(attempt, history, ends);
    } catch (err) {
      this.deps.logger.error({ err, jobId }, "could not count the job's deaths; trying it as if none");
      return 0;
    }
  }

  /** Waits for this worker's turn to run a job that was in flight at a death; resolves to the turn's release. */
  private suspectTurn(): Promise<() => void> {
    let release!: () => void;
    const turn = new Promise<void>((resolve) => (release = resolve));
    const previous = this.suspects;
    this.suspects = previous.then(() => turn);
    return previous.then(() => release);
  }

  /** Records the job's failure and acks its command; a failure to record leaves it for the next delivery. */
  private async settleFailure(msg: JsMsg, command: jobEventsV1.RenderCommand, err: unknown): Promise<void> {
    try {
      await this.fail(command, err);
      msg.ack();
    } catch (failErr) {
      this.deps.logger.error({ err: failErr, jobId: command.jobId }, "could not record the failure; redelivering");
      msg.nak(1_000);
    }
  }

  /** Loads the job and restores its acceptance if the gateway could not append it (unless the gateway gave the job up). */
  private async loadJob(command: jobEventsV1.RenderCommand, storedAtMs: number): Promise<JobState> {
    // Usually the acceptance is the job's only event: one read settles it.
    const last = await readLastJobEvent(this.deps.jsm, command.jobId);
    const fresh = last && last.event.id === command.accepted?.id ? foldJob([last]) : undefined;
    if (fresh) return fresh;
    let job = foldJob(await readJobEvents(this.deps.jsm, command.jobId));
    if (!job && command.accepted) {
      if (storedAtMs - Date.parse(command.accepted.time) > SUBMIT_GIVE_UP_MS) throw new AbandonedCommand();
      try {
        await appendJobEvent(this.deps.js, "render", retainedAcceptance(command.accepted), 0);
      } catch (err) {
        if (!isWrongLastSequence(err)) throw err;
      }
      job = foldJob(await readJobEvents(this.deps.jsm, command.jobId));
    }
    if (!job) throw new AppError("INTERNAL_ERROR", "render command without an accepted job", "");
    return job;
  }

  /** The command's acceptance with its secrets opened: only here, in render, are they ever in clear (its destination stays sealed to the webhook service). */
  private openSecrets(command: jobEventsV1.RenderCommand): jobEventsV1.JobAccepted | undefined {
    if (!command.accepted) return undefined;
    try {
      return openJobSecrets(this.deps.sealingKey, command.accepted);
    } catch {
      // Ours (keys out of step): retried like any failure on our side, then failed refunded.
      throw new AppError("INTERNAL_ERROR", "the job's sealed secrets do not open with this worker's sealing key (SEALING_KEY)", "");
    }
  }

  private async process(command: jobEventsV1.RenderCommand, attempt: number, storedAtMs: number): Promise<void> {
    const job = await this.loadJob(command, storedAtMs);
    if (isTerminal(job.status)) throw new StaleJob();
    if (command.cancelled) return this.cancel(job);
    const accepted = this.openSecrets(command);
    if (!accepted) throw new AppError("INTERNAL_ERROR", "render command without its acceptance", "");
    // Rendered already (the handoff of its destination may not have been stored): hand it off again.
    const renderedId = renderedEventIdOf(job);
    if (renderedId) return handOffDestination(this.deps.js, job, accepted.sealedDestination, renderedId, outcomeInboxOf(command));

    // The document is made without waiting for job.started's acknowledgement; nothing is
    // stored or announced before it is in. If it is refused (another delivery took the job
    // meanwhile) or fails, the making is cancelled: its document could not be recorded.
    const production = new AbortController();
    const startedSeq = appendJobEvent(
      this.deps.js,
      "render",
      jobEvent("job.started", { jobId: job.id, keyId: job.keyId, source: "render", started: { worker: this.deps.workerName, attempt } }),
      job.lastSeqOf.render,
    ).then(
      (ack) => ack.seq,
      (err: unknown) => {
        const reason = isWrongLastSequence(err) ? new StaleJob() : err;
        production.abort(reason);
        return Promise.reject(reason);
      },
    );
    // Awaited below; until then a refusal must not count as unhandled.
    startedSeq.catch(() => undefined);

    const document = await this.deps.producer.produce({ jobId: job.id, keyId: job.keyId, request: accepted }, production.signal).catch(async (err: unknown) => {
      // A job that is not ours fails nowhere; otherwise the producer's error stands.
      await startedSeq;
      throw err;
    });
    try {
      await this.succeed(job, accepted, document, await startedSeq, outcomeInboxOf(command));
    } finally {
      document.release();
    }
  }

  /**
   * Stores the output, appends job.succeeded after render's `lastSeq`, and announces it on the waiting gateway's `inbox`;
   * for a job with a destination, appends job.rendered instead and hands the destination off (see destination.ts).
   */
  private async succeed(job: JobState, accepted: jobEventsV1.JobAccepted, document: ProducedDocument, lastSeq: number, inbox: string): Promise<void> {
    const { data, contentType, filename, attachment, pages, renderMs, scriptErrors } = document;
    const ttlSeconds = accepted.options?.outputTtlSeconds ?? 0;
    const stored = await this.deps.store({ outputId: "", contentType, filename, jobId: job.id, keyId: job.keyId, attachment, ttlSeconds }, data);
    // Whether the job has a destination is the JOBS stream's to say (its host); its url and headers are sealed to the webhook service.
    const destination = job.destination;
    const succeeded = jobEvent(destination ? "job.rendered" : "job.succeeded", {
      jobId: job.id,
      keyId: job.keyId,
      source: "render",
      [destination ? "rendered" : "succeeded"]: {
        outputId: stored.outputId,
        url: stored.url,
        expiresAt: stored.expiresAt,
        contentType: stored.contentType,
        sizeBytes: stored.sizeBytes,
        pages,
        renderMs,
        callback: Boolean(accepted.webhookUrl),
        scriptErrors,
      },
    });
    try {
      await appendOutcome(this.deps.js, succeeded, lastSeq);
    } catch (err) {
      if (isWrongLastSequence(err)) throw new StaleJob();
      throw err;
    }
    if (destination) {
      await handOffDestination(this.deps.js, job, accepted.sealedDestination, succeeded.id, inbox);
      this.deps.logger.info({ jobId: job.id, renderMs, pages, bytes: data.byteLength, host: destination.host }, "job rendered; its destination is next");
      return;
    }
    announceOutcome(this.deps.nc, inbox, succeeded, this.announcedOutput(accepted, document));
    jobMetrics.succeeded(document.format);
    this.deps.logger.info({ jobId: job.id, renderMs, pages, bytes: data.byteLength }, "job succeeded");
  }

  /**
   * The output to announce with the outcome: only a sync job's (a gateway
   * waits for it; a webhook job's caller does not), and only up to the
   * configured size and what the NATS server accepts in one message.
   */
  private announcedOutput(accepted: jobEventsV1.JobAccepted, { filename, data, attachment }: ProducedDocument): AnnouncedOutput | undefined {
    if (accepted.webhookUrl || this.deps.announcedOutputMaxBytes === 0) return undefined;
    const serverMax = (this.deps.nc.info?.max_payload ?? 0) - ANNOUNCEMENT_OVERHEAD_BYTES;
    return data.byteLength <= Math.min(this.deps.announcedOutputMaxBytes, serverMax) ? { filename, data, attachment } : undefined;
  }

  /**
   * A batch item cancelled before it was dispatched (metering sent this command instead): ended
   * failed, CANCELLED, refunded (metering refunded it at the cancellation; the charge remembers).
   */
  private async cancel(job: JobState): Promise<void> {
    const failed = { code: "CANCELLED", message: "cancelled with its batch before it started; the quota unit was refunded", refund: true, callback: false };
    try {
      await appendJobEvent(this.deps.js, "render", jobEvent("job.failed", { jobId: job.id, keyId: job.keyId, source: "render", failed }), job.lastSeqOf.render);
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
    }
  }

  private async fail(command: jobEventsV1.RenderCommand, err: unknown): Promise<void> {
    const failed = failureOf(err);
    if (failed.refund) this.deps.logger.error({ err, jobId: command.jobId }, "job failed on our side");
    const job = foldJob(await readJobEvents(this.deps.jsm, command.jobId));
    if (!job || isTerminal(job.status)) return;
    const event = jobEvent("job.failed", { jobId: job.id, keyId: job.keyId, source: "render", failed: { ...failed, callback: Boolean(job.webhookUrl) } });
    try {
      await appendOutcome(this.deps.js, event, job.lastSeqOf.render);
      announceOutcome(this.deps.nc, outcomeInboxOf(command), event);
      jobMetrics.failed(failed.code);
    } catch (appendErr) {
      if (!isWrongLastSequence(appendErr)) throw appendErr;
    }
  }
}

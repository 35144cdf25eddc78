import { isWrongLastSequence, jobOverdueAfterMs, subjects, type Logger } from "@pressroom/platform";
import { appendOutcome, foldJob, isTerminal, jobEvent, readJobEvents, type JobState } from "@pressroom/domain";
import type { JetStreamClient, JetStreamManager, NatsConnection, Subscription } from "nats";
import { jobMetrics } from "./metrics";

export interface JobExpiryDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  logger: Logger;
  maxQueueWaitMs: number;
  deadlineMs: number;
}

/** A job id as newId("job") makes it: also a safe subject token. */
const JOB_ID = /^job_[0-9a-z]{26}$/;

/**
 * Ends a job that can no longer run, on metering's request: its command is
 * gone from the RENDER queue (aged out past the queue's maximum wait, deleted,
 * purged, or its deliveries spent) and no attempt of it can still be running,
 * yet it has no terminal event, so its slot would be held and its caller never
 * answered. It ends `failed` with INTERNAL_ERROR, refunded (ours), like any
 * job.failed: metering frees the slot and refunds, the webhook service calls
 * back. Render checks the job itself (never on metering's word): only a job
 * overdue by its own acceptance time is ended, with the append's expected
 * sequence, so a render that records its outcome first wins and the request
 * does nothing.
 */
export class JobExpiry {
  private subscription: Subscription | undefined;
  private readonly overdueAfterMs: number;
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly deps: JobExpiryDeps) {
    this.overdueAfterMs = jobOverdueAfterMs(deps);
  }

  /** Answers requests, shared by the render replicas (one queue group). */
  start(): void {
    this.subscription = this.deps.nc.subscribe(subjects.jobExpiryRequested, {
      queue: "render-expiry",
      callback: (err, msg) => {
        if (err) return;
        const jobId = msg.string();
        const run = this.expire(jobId).catch((expireErr: unknown) =>
          this.deps.logger.warn({ err: expireErr, jobId }, "could not end an overdue job; metering asks again at its next sweep"),
        );
        this.running.add(run);
        void run.finally(() => this.running.delete(run));
      },
    });
  }

  /** Takes no more requests; resolves once those being handled are done. */
  async stop(): Promise<void> {
    this.subscription?.unsubscribe();
    await Promise.all(this.running);
  }

  /** Ends the job if it is overdue and has not ended; returns whether it did. */
  async expire(jobId: string, now = Date.now()): Promise<boolean> {
    if (!JOB_ID.test(jobId)) return false;
    const job = foldJob(await readJobEvents(this.deps.jsm, jobId));
    if (!job || isTerminal(job.status) || now < Date.parse(job.createdAt) + this.overdueAfterMs) return false;
    // Rendered, its destination being tried: the webhook service ends it (through DestinationSettler).
    if (job.destination?.rendered) return false;
    const event = jobEvent("job.failed", {
      jobId: job.id,
      keyId: job.keyId,
      source: "render",
      failed: {
        code: "INTERNAL_ERROR",
        message: expiredMessage(job, this.deps),
        refund: true,
        callback: Boolean(job.webhookUrl),
      },
    });
    try {
      await appendOutcome(this.deps.js, event, job.lastSeqOf.render);
    } catch (err) {
      if (isWrongLastSequence(err)) return false;
      throw err;
    }
    jobMetrics.failed("INTERNAL_ERROR");
    this.deps.logger.error({ jobId: job.id, status: job.status, attempts: job.attempts }, "ended a job whose render command was lost");
    return true;
  }
}

function expiredMessage(job: JobState, bounds: { maxQueueWaitMs: number; deadlineMs: number }): string {
  const where = job.status === "rendering" ? "its render did not finish" : "it was not rendered";
  return `${where} within the queue's maximum wait (${Math.round(bounds.maxQueueWaitMs / 1000)} s) and the render deadline (${Math.round(bounds.deadlineMs / 1000)} s) on our side; the quota unit was refunded`;
}

import { jobEventsV1 } from "@pressroom/contracts";
import { isWrongLastSequence, publishEvent, subjects, type Logger } from "@pressroom/platform";
import { announceOutcome, appendOutcome, foldJob, isTerminal, jobEvent, readJobEvents, type JobEvent, type JobState } from "@pressroom/domain";
import type { JetStreamClient, JetStreamManager, NatsConnection, Subscription } from "nats";
import type { OutputFormat } from "../producer/producer";
import { jobMetrics } from "./metrics";

/**
 * A job with a destination (issue 42) is not succeeded by its render: the
 * worker records job.rendered (the output made and stored) and hands the
 * destination, as the gateway sealed it to the webhook service's key (render
 * never opens it), to the webhook service on the DESTINATIONS work queue, which
 * PUTs the output there on the callbacks' retry schedule, records each
 * attempt, and once the destination accepted or was given up asks render
 * (DestinationSettler) to end the job: only render makes a job succeed or fail.
 */

/** Publishes a rendered job's destination for the webhook service: `sealedDestination` as the command carries it (JobAccepted.sealed_destination), unopened. */
export async function handOffDestination(
  js: JetStreamClient,
  job: Pick<JobState, "id" | "keyId">,
  sealedDestination: string,
  renderedEventId: string,
  outcomeInbox: string,
): Promise<void> {
  const delivery: jobEventsV1.DestinationDelivery = { jobId: job.id, keyId: job.keyId, sealedDestination, outcomeInbox };
  await publishEvent(js, {
    subject: subjects.destinationDelivery,
    spanSubject: subjects.destinationDelivery,
    // One message per rendered job, also when a redelivered command hands it off again.
    msgId: renderedEventId,
    type: "destination.delivery",
    data: jobEventsV1.DestinationDelivery.encode(delivery).finish(),
  });
}

/** The id of the job's job.rendered event, if it has one. */
export function renderedEventIdOf(job: JobState): string | undefined {
  return job.destination?.rendered ? job.history.find((event) => event.type === "job.rendered")?.id : undefined;
}

export interface DestinationSettlerDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  logger: Logger;
}

/** A job id as newId("job") makes it: also a safe subject token. */
const JOB_ID = /^job_[0-9a-z]{26}$/;

/**
 * Ends a job whose destination settled, on the webhook service's request
 * (core NATS; it asks again until the job's end is in its history). Render
 * reads the job itself: only a rendered job whose destination is delivered
 * succeeds (with the output job.rendered recorded), and only one whose
 * destination was given up fails, DESTINATION_FAILED, not refunded (the
 * document was made). The append expects render's last sequence, so it happens once.
 */
export class DestinationSettler {
  private subscription: Subscription | undefined;
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly deps: DestinationSettlerDeps) {}

  /** Answers requests, shared by the render replicas (one queue group). */
  start(): void {
    this.subscription = this.deps.nc.subscribe(subjects.destinationSettled, {
      queue: "render-destination-settled",
      callback: (err, msg) => {
        if (err) return;
        let request: jobEventsV1.DestinationSettled;
        try {
          request = jobEventsV1.DestinationSettled.decode(msg.data);
        } catch {
          return;
        }
        const run = this.settle(request).catch((settleErr: unknown) =>
          this.deps.logger.warn({ err: settleErr, jobId: request.jobId }, "could not end a job whose destination settled; the webhook service asks again"),
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

  /** Ends the job if its destination settled and it has not ended; returns whether it did. */
  async settle(request: jobEventsV1.DestinationSettled): Promise<boolean> {
    if (!JOB_ID.test(request.jobId)) return false;
    const job = foldJob(await readJobEvents(this.deps.jsm, request.jobId));
    const destination = job?.destination;
    if (!job || !destination?.rendered || isTerminal(job.status) || destination.state === "pending") return false;
    const callback = Boolean(job.webhookUrl);
    const event: JobEvent =
      destination.state === "delivered"
        ? jobEvent("job.succeeded", { jobId: job.id, keyId: job.keyId, source: "render", succeeded: { ...destination.rendered, callback } })
        : jobEvent("job.failed", {
            jobId: job.id,
            keyId: job.keyId,
            source: "render",
            failed: {
              code: "DESTINATION_FAILED",
              message: `the document was made, but its destination (${destination.host}) did not accept it: ${destination.reason ?? "it was given up"}`,
              refund: false,
              callback,
            },
          });
    try {
      await appendOutcome(this.deps.js, event, job.lastSeqOf.render);
    } catch (err) {
      if (isWrongLastSequence(err)) return false;
      throw err;
    }
    if (request.outcomeInbox) announceOutcome(this.deps.nc, request.outcomeInbox, event);
    if (event.succeeded) jobMetrics.succeeded(formatOf(event.succeeded.contentType));
    else jobMetrics.failed("DESTINATION_FAILED");
    this.deps.logger.info({ jobId: job.id, outcome: destination.state, host: destination.host }, "job ended after its destination settled");
    return true;
  }
}

function formatOf(contentType: string): OutputFormat {
  return (contentType === "application/pdf" ? "pdf" : contentType.replace(/^image\//, "")) as OutputFormat;
}

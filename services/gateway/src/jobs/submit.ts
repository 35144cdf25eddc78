import { createHash } from "node:crypto";
import { jobEventsV1 } from "@pressroom/contracts";
import {
  appendJobEvent,
  EVENT_TYPE_HEADER,
  isTerminal,
  isWrongLastSequence,
  jobEvent,
  loadJob,
  outcomeOf,
  publishEvent,
  retainedAcceptance,
  subjects,
  type JobEvent,
  type JobOutcome,
} from "@pressroom/platform";
import { setTimeout as sleep } from "node:timers/promises";
import type { JetStreamClient, JetStreamManager, NatsConnection, Subscription } from "nats";
import type { JobRequest } from "../validation";

export interface JobBus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/** After a terminal event shows on the job's subject, how long to wait for the worker's announcement before reading the history. */
const ANNOUNCEMENT_GRACE_MS = 250;
/** How often the history is read while waiting, in case a reconnect lost both messages. */
const POLL_MS = 5_000;

/**
 * Waits for a job's end. The worker announces the outcome once JetStream has
 * stored it (subjects.jobOutcome), and that announcement alone answers the
 * wait. The job's own subject is watched as well: a terminal event seen
 * there without an announcement (the worker died between the two) leads to
 * a read of the history, which is the record; the event itself is not
 * trusted, as a core subscriber also sees appends that JetStream refused.
 * Both subscriptions exist before the job is published, so the end cannot
 * be missed; a periodic read covers a reconnect.
 */
export class JobWatch {
  private readonly subs: Subscription[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  /** An outcome that arrived before wait() was called (a job that failed at once). */
  private early?: JobOutcome;
  private resolve?: (outcome: JobOutcome | undefined) => void;
  private closed = false;

  constructor(
    private readonly bus: JobBus,
    private readonly jobId: string,
  ) {
    this.subs.push(
      bus.nc.subscribe(subjects.jobOutcome(jobId), {
        callback: (err, msg) => {
          if (err) return;
          try {
            const outcome = outcomeOf(jobId, msg.data);
            if (outcome) this.settle(outcome);
          } catch {
            // Not a job event: ignore it; the history still answers.
          }
        },
      }),
      bus.nc.subscribe(subjects.job(jobId, "render"), {
        callback: (err, msg) => {
          if (err) return;
          const type = msg.headers?.get(EVENT_TYPE_HEADER);
          if (type === "job.succeeded" || type === "job.failed") this.later(ANNOUNCEMENT_GRACE_MS, () => this.readHistory());
        },
      }),
    );
  }

  /** Resolves with the outcome, or undefined if the job has not ended after timeoutMs. */
  wait(timeoutMs: number): Promise<JobOutcome | undefined> {
    if (this.early || this.closed) {
      const outcome = this.early;
      this.close();
      return Promise.resolve(outcome);
    }
    return new Promise<JobOutcome | undefined>((resolve) => {
      this.resolve = resolve;
      const poll = setInterval(() => this.readHistory(), POLL_MS);
      this.timers.add(poll);
      this.later(timeoutMs, () => {
        void loadJob(this.bus.jsm, this.jobId).then(
          (job) => this.settle(job && isTerminal(job.status) ? job : undefined),
          () => this.settle(undefined),
        );
      });
    });
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const sub of this.subs) sub.unsubscribe();
  }

  private settle(outcome: JobOutcome | undefined): void {
    if (this.closed) return;
    if (!this.resolve) {
      this.early ??= outcome;
      return;
    }
    const resolve = this.resolve;
    this.close();
    resolve(outcome);
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  private readHistory(): void {
    void loadJob(this.bus.jsm, this.jobId).then(
      (job) => {
        if (job && isTerminal(job.status)) this.settle(job);
      },
      () => undefined,
    );
  }
}

/**
 * Pauses between the tries of a publish. A publish that timed out may still
 * have been stored: its message id makes the retry a duplicate that JetStream
 * acknowledges without storing it twice (within the streams' 2-minute window).
 * All tries (each bounded by the JetStream client's 5 s timeout) end well
 * within SUBMIT_GIVE_UP_MS, after which workers drop a late-stored command.
 */
const PUBLISH_RETRY_DELAYS_MS = [250, 1_000, 2_000];

async function withRetries<T>(publish: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await publish();
    } catch (err) {
      const delay = PUBLISH_RETRY_DELAYS_MS[attempt];
      if (delay === undefined || isWrongLastSequence(err)) throw err;
      await sleep(delay);
    }
  }
}

/**
 * Makes a job durable: the render command goes to the RENDER work queue, then
 * job.accepted is appended to the job's subject, each publish retried (see
 * PUBLISH_RETRY_DELAYS_MS). Rejects only when the command could not be
 * stored. Once it is, the job is accepted: the command carries the
 * acceptance, so if its append fails (or the gateway dies before it) the
 * worker appends it. Only the command holds the html and data; the JOBS
 * stream gets their digests and sizes (retainedAcceptance).
 */
export async function submitJob(
  bus: JobBus,
  input: { jobId: string; keyId: string; plan: string; request: JobRequest; templateVersion: number },
): Promise<JobEvent> {
  const accepted = jobEvent("job.accepted", {
    jobId: input.jobId,
    keyId: input.keyId,
    source: "gateway",
    accepted: {
      kind: input.request.kind === "image" ? jobEventsV1.JobKind.JOB_KIND_IMAGE : jobEventsV1.JobKind.JOB_KIND_RENDER,
      templateId: input.request.templateId ?? "",
      templateVersion: input.templateVersion,
      html: input.request.html ?? "",
      dataJson: input.request.dataJson,
      webhookUrl: input.request.webhookUrl ?? "",
      plan: input.plan,
      htmlSha256: input.request.html === undefined ? "" : sha256(input.request.html),
      htmlBytes: input.request.html === undefined ? 0 : Buffer.byteLength(input.request.html, "utf8"),
      dataSha256: sha256(input.request.dataJson),
      dataBytes: Buffer.byteLength(input.request.dataJson, "utf8"),
    },
  });
  const command: jobEventsV1.RenderCommand = { jobId: input.jobId, keyId: input.keyId, accepted };
  await withRetries(() =>
    publishEvent(bus.js, {
      subject: subjects.renderRequested,
      spanSubject: subjects.renderRequested,
      msgId: input.jobId,
      type: "render.requested",
      data: jobEventsV1.RenderCommand.encode(command).finish(),
    }),
  );
  // Wrong last sequence: a worker that took the command first appended this same acceptance.
  await withRetries(() => appendJobEvent(bus.js, "gateway", retainedAcceptance(accepted), 0)).catch(() => undefined);
  return accepted;
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

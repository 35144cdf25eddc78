import { EVENT_TYPE_HEADER, isTerminal, loadJob, outcomeOf, subjects, type JobOutcome } from "@pressroom/platform";
import type { Subscription } from "nats";
import type { JobBus } from "./submit";

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

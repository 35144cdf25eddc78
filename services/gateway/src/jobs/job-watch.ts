import { subjects } from "@pressroom/platform";
import { announcedOutcome, isTerminal, loadJob, type JobOutcome } from "@pressroom/domain";
import { nuid, type Subscription } from "nats";
import type { JobBus } from "./submit";

/**
 * When a wait reads the job's history, in case its announcement was missed:
 * after the first delay, then after each next one, the last repeating.
 */
const HISTORY_READS_MS = [1_000, 2_000, 5_000];

/**
 * Where this gateway process waits for the outcomes of the jobs it submits:
 * one subscription (subjects.outcomes(id)) for all of them, named in every
 * render command it publishes (RenderCommand.outcome_inbox), rather than a
 * subscription per job (which NATS would have to add and remove, and, in a
 * cluster, spread to every server, twice per job). The worker announces a
 * job's terminal event there once JetStream has stored it, and that
 * announcement alone answers the wait.
 *
 * An announcement can be missed: core NATS delivers at most once (a
 * reconnect loses it), a worker can die between the append and the
 * announcement, and a replayed request may wait here for a job another
 * replica submitted (announced to that replica). So every wait also reads
 * the job's history, which is the record (HISTORY_READS_MS).
 */
export class OutcomeInbox {
  readonly id = nuid.next();
  private readonly watches = new Map<string, Set<JobWatch>>();
  private readonly sub: Subscription;
  private answeringNow = false;

  constructor(private readonly bus: JobBus) {
    this.sub = bus.nc.subscribe(subjects.outcomes(this.id), {
      callback: (err, msg) => {
        if (err) return;
        let outcome: JobOutcome | undefined;
        try {
          outcome = announcedOutcome(msg.data);
        } catch {
          // Not an announcement: ignore it; the history still answers.
          return;
        }
        if (outcome) for (const watch of this.watches.get(outcome.id) ?? []) watch.settle(outcome);
      },
    });
  }

  /** Starts watching a job; call it before the job is submitted, so that its end cannot be missed. */
  watch(jobId: string): JobWatch {
    const watch = new JobWatch(this.bus, jobId, () => {
      const set = this.watches.get(jobId);
      set?.delete(watch);
      if (set?.size === 0) this.watches.delete(jobId);
    });
    const set = this.watches.get(jobId);
    if (set) set.add(watch);
    else this.watches.set(jobId, new Set([watch]));
    if (this.answeringNow) watch.giveUp();
    return watch;
  }

  /**
   * The process is stopping: every wait ends now without an outcome, and every wait begun
   * from now on at once, so each sync request answers 202 with its job, which keeps running
   * (its client polls the Location). Called by the service runner before the shutdown's bound.
   */
  answerNow(): void {
    this.answeringNow = true;
    for (const watch of [...this.watches.values()].flatMap((set) => [...set])) watch.giveUp();
  }

  /** Jobs waited on now. */
  get size(): number {
    return this.watches.size;
  }

  close(): void {
    this.sub.unsubscribe();
  }
}

/** One wait for one job's end (OutcomeInbox.watch). */
export class JobWatch {
  private readonly timers = new Set<NodeJS.Timeout>();
  /** An outcome that arrived before wait() was called (a job that failed at once). */
  private early?: JobOutcome;
  private resolve?: (outcome: JobOutcome | undefined) => void;
  private closed = false;

  constructor(
    private readonly bus: JobBus,
    private readonly jobId: string,
    private readonly onClose: () => void,
  ) {}

  /** Resolves with the outcome, or undefined if the job has not ended after timeoutMs. */
  wait(timeoutMs: number): Promise<JobOutcome | undefined> {
    if (this.early || this.closed) {
      const outcome = this.early;
      this.close();
      return Promise.resolve(outcome);
    }
    return new Promise<JobOutcome | undefined>((resolve) => {
      this.resolve = resolve;
      this.readHistoryLater(0);
      this.later(timeoutMs, () => {
        void loadJob(this.bus.jsm, this.jobId).then(
          (job) => this.settle(job && isTerminal(job.status) ? job : undefined),
          () => this.settle(undefined),
        );
      });
    });
  }

  /** Ends the wait without an outcome: at once if it is waiting, or as soon as it starts. */
  giveUp(): void {
    if (this.resolve) this.settle(undefined);
    else this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.onClose();
  }

  settle(outcome: JobOutcome | undefined): void {
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

  private readHistoryLater(read: number): void {
    this.later(HISTORY_READS_MS[Math.min(read, HISTORY_READS_MS.length - 1)]!, () => {
      void loadJob(this.bus.jsm, this.jobId).then(
        (job) => {
          if (job && isTerminal(job.status)) this.settle(job);
        },
        () => undefined,
      );
      this.readHistoryLater(read + 1);
    });
  }
}

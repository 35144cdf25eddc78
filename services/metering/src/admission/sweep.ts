import type { Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { JetStreamManager, NatsConnection } from "nats";
import type { MeteringDb } from "../db";
import { sweep } from "./admission.repository";
import { refundLostAdmissions, renewQueuedLeases, requestOverdueExpiry } from "./finished-jobs";
import { sweepIdempotencyKeys } from "./idempotency.repository";

export interface AdmissionSweepDeps {
  db: Kysely<MeteringDb>;
  jsm: JetStreamManager;
  nc: NatsConnection;
  logger: Logger;
  leaseSeconds: number;
  /** A job not ended this long after its admission is overdue (jobOverdueAfterMs). */
  overdueAfterMs: number;
  intervalMs: number;
}

/**
 * Every intervalMs on this replica: renews the leases of jobs still queued or
 * rendering, asks render to end overdue jobs, refunds admitted jobs that were
 * lost before submission, then
 * deletes what no decision needs any more (sweep() and sweepIdempotencyKeys()).
 * Every replica runs it; doing it twice is harmless.
 */
export class AdmissionSweep {
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly deps: AdmissionSweepDeps) {}

  start(): void {
    const { db, jsm, nc, logger, leaseSeconds, overdueAfterMs } = this.deps;
    this.timer = setInterval(() => {
      const run = renewQueuedLeases({ db, jsm, logger }, leaseSeconds, overdueAfterMs)
        .then(async (renewed) => {
          const overdue = await requestOverdueExpiry({ db, jsm, nc, logger }, overdueAfterMs);
          const lost = await refundLostAdmissions({ db, jsm, logger });
          const [removed, idempotencyKeys] = await Promise.all([sweep(db), sweepIdempotencyKeys(db)]);
          return { renewed, overdue, lost, ...removed, idempotencyKeys };
        })
        .then(
          (removed) => logger.debug({ removed }, "metering sweep"),
          (err: unknown) => logger.warn({ err }, "metering sweep failed; the next one will retry"),
        );
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }, this.deps.intervalMs);
    this.timer.unref();
  }

  /** No sweep starts any more; resolves when the ones running have ended. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.running);
  }
}

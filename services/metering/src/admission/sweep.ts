import type { Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { JetStreamManager } from "nats";
import type { MeteringDb } from "../db";
import { sweep } from "./admission.repository";
import { refundLostAdmissions, renewQueuedLeases } from "./finished-jobs";
import { sweepIdempotencyKeys } from "./idempotency.repository";

export interface AdmissionSweepDeps {
  db: Kysely<MeteringDb>;
  jsm: JetStreamManager;
  logger: Logger;
  leaseSeconds: number;
  intervalMs: number;
}

/**
 * Every intervalMs on this replica: renews the leases of jobs still queued or
 * rendering, refunds admitted jobs that were lost before submission, then
 * deletes what no decision needs any more (sweep() and sweepIdempotencyKeys()).
 * Every replica runs it; doing it twice is harmless.
 */
export class AdmissionSweep {
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly deps: AdmissionSweepDeps) {}

  start(): void {
    const { db, jsm, logger, leaseSeconds } = this.deps;
    this.timer = setInterval(() => {
      const run = renewQueuedLeases({ db, jsm, logger }, leaseSeconds)
        .then(async (renewed) => {
          const lost = await refundLostAdmissions({ db, jsm, logger });
          const [removed, idempotencyKeys] = await Promise.all([sweep(db), sweepIdempotencyKeys(db)]);
          return { renewed, lost, ...removed, idempotencyKeys };
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

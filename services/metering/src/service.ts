import { jobOverdueAfterMs, type Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { JetStreamClient, JetStreamManager, NatsConnection } from "nats";
import { JobEventsConsumer } from "./admission/job-events.consumer";
import { AdmissionSweep } from "./admission/sweep";
import type { MeteringDb } from "./db";

export interface ServiceDeps {
  db: Kysely<MeteringDb>;
  js: JetStreamClient;
  jsm: JetStreamManager;
  nc: NatsConnection;
  logger: Logger;
  leaseSeconds: number;
  sweepIntervalMs: number;
  /** The render settings a job's life is bound by (see jobOverdueAfterMs). */
  maxQueueWaitMs: number;
  deadlineMs: number;
}

/**
 * What metering runs beside its gRPC service: the consumer of job events
 * (slots released, refunds) and the sweep (leases renewed, lost admissions
 * refunded, old rows deleted). Nothing runs until started.
 */
export function createService(deps: ServiceDeps): { jobEvents: JobEventsConsumer; sweep: AdmissionSweep } {
  const { db, js, jsm, nc, logger, leaseSeconds } = deps;
  const overdueAfterMs = jobOverdueAfterMs({ maxQueueWaitMs: deps.maxQueueWaitMs, deadlineMs: deps.deadlineMs });
  return {
    jobEvents: new JobEventsConsumer({ js, db, logger }),
    sweep: new AdmissionSweep({ db, jsm, nc, logger, leaseSeconds, overdueAfterMs, intervalMs: deps.sweepIntervalMs }),
  };
}

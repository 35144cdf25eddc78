import type { Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { JetStreamClient, JetStreamManager } from "nats";
import { JobEventsConsumer } from "./admission/job-events.consumer";
import { AdmissionSweep } from "./admission/sweep";
import type { MeteringDb } from "./db";

export interface ServiceDeps {
  db: Kysely<MeteringDb>;
  js: JetStreamClient;
  jsm: JetStreamManager;
  logger: Logger;
  leaseSeconds: number;
  sweepIntervalMs: number;
}

/**
 * What metering runs beside its gRPC service: the consumer of job events
 * (slots released, refunds) and the sweep (leases renewed, lost admissions
 * refunded, old rows deleted). Nothing runs until started.
 */
export function createService(deps: ServiceDeps): { jobEvents: JobEventsConsumer; sweep: AdmissionSweep } {
  const { db, js, jsm, logger, leaseSeconds } = deps;
  return {
    jobEvents: new JobEventsConsumer({ js, db, logger }),
    sweep: new AdmissionSweep({ db, jsm, logger, leaseSeconds, intervalMs: deps.sweepIntervalMs }),
  };
}

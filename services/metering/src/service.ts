import { jobOverdueAfterMs, type ServiceParts } from "@pressroom/platform";
import { JobEventsConsumer } from "./admission/job-events.consumer";
import { AdmissionSweep } from "./admission/sweep";
import { BatchArchivedConsumer } from "./batches/batch-archived.consumer";
import type { MeteringDeps } from "./deps";

/**
 * What metering runs beside its gRPC service: the consumer of job events
 * (slots released, refunds, batch items ended), of batch archives, and the sweep (leases renewed, lost admissions
 * refunded, old rows deleted). Nothing runs until the runner starts it.
 */
export function createService(deps: MeteringDeps): Pick<ServiceParts, "consumers" | "loops"> {
  const { db, logger, config } = deps;
  const { nc, js, jsm } = deps.bus;
  const overdueAfterMs = jobOverdueAfterMs({ maxQueueWaitMs: config.RENDER_MAX_QUEUE_WAIT_MS, deadlineMs: config.RENDER_DEADLINE_MS });
  return {
    consumers: {
      "job events": new JobEventsConsumer({ js, db, logger, batches: deps.batches, ends: deps.batchEnds }),
      "batch archives": new BatchArchivedConsumer({ js, logger, ends: deps.batchEnds }),
    },
    loops: {
      "batch dispatch": deps.batches,
      "batch ends": deps.batchEnds,
      sweep: new AdmissionSweep({ db, jsm, nc, logger, leaseSeconds: config.SLOT_LEASE_SECONDS, overdueAfterMs, intervalMs: config.SWEEP_INTERVAL_MS }),
    },
  };
}

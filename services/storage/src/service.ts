import type { ServiceParts } from "@pressroom/platform";
import { ArchiveConsumer } from "./archives/archive.consumer";
import type { StorageDeps } from "./deps";
import { ExpirySweep } from "./outputs/expiry-sweep";

/** What storage runs beside its gRPC service: the expiry sweep, and the consumer that makes batches' archives. Nothing runs until the runner starts it. */
export function createService(deps: StorageDeps): Pick<ServiceParts, "loops" | "consumers"> {
  return { loops: { "expiry sweep": new ExpirySweep(deps, deps.sweepIntervalMs) }, consumers: { "batch archives": new ArchiveConsumer(deps) } };
}

import type { ServiceParts } from "@pressroom/platform";
import type { StorageDeps } from "./deps";
import { ExpirySweep } from "./outputs/expiry-sweep";

/** What storage runs beside its gRPC service: the expiry sweep. Nothing runs until the runner starts it. */
export function createService(deps: StorageDeps): Pick<ServiceParts, "loops"> {
  return { loops: { "expiry sweep": new ExpirySweep(deps, deps.sweepIntervalMs) } };
}

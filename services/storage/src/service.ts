import { ExpirySweep } from "./outputs/expiry-sweep";
import type { StorageDeps } from "./outputs/outputs.grpc";

/** What storage runs beside its gRPC service: the expiry sweep. Nothing runs until started. */
export function createService(deps: StorageDeps & { sweepIntervalMs: number }): { expirySweep: ExpirySweep } {
  return { expirySweep: new ExpirySweep(deps, deps.sweepIntervalMs) };
}

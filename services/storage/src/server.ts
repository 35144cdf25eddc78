import type { GrpcService, MethodCallers } from "@pressroom/platform";
import { storageServiceDefinition } from "./outputs/chunk-wire";
import type { StorageDeps } from "./deps";
import { storageService } from "./outputs/outputs.grpc";

/**
 * Who may call each method (the peer named by the caller's certificate): render registers outputs, the gateway
 * serves, deletes and signs them, the webhook service reads one to PUT it to its job's destination (with its signed URL, like a download).
 */
export const STORAGE_CALLERS: MethodCallers<typeof storageServiceDefinition> = {
  registerOutput: ["render"],
  getOutput: ["gateway", "webhook"],
  deleteOutput: ["gateway"],
  signOutputs: ["gateway"],
};

/**
 * The storage gRPC service, built from its dependencies. Nothing listens
 * here: the runner binds it (startGrpcServer, which adds grpc.health.v1
 * and times every call), and a test can serve it on a port of its own.
 */
export function createServer(deps: StorageDeps): GrpcService[] {
  return [{ definition: storageServiceDefinition, implementation: storageService(deps), callers: STORAGE_CALLERS }];
}

import type { GrpcService } from "@pressroom/platform";
import { storageServiceDefinition } from "./outputs/chunk-wire";
import { storageService, type StorageDeps } from "./outputs/outputs.grpc";

/**
 * The storage gRPC service, built from its dependencies. Nothing listens
 * here: main.ts binds it (startGrpcServer, which adds grpc.health.v1 and
 * times every call), and a test can serve it on a port of its own.
 */
export function createServer(deps: StorageDeps): GrpcService[] {
  return [{ definition: storageServiceDefinition, implementation: storageService(deps) }];
}

import { identityV1 } from "@pressroom/contracts";
import type { GrpcService } from "@pressroom/platform";
import { identityService, type IdentityDeps } from "./keys/keys.grpc";

/**
 * The identity gRPC service, built from its dependencies. Nothing listens
 * here: main.ts binds it (startGrpcServer, which adds grpc.health.v1 and
 * times every call), and a test can serve it on a port of its own.
 */
export function createServer(deps: IdentityDeps): GrpcService[] {
  return [{ definition: identityV1.IdentityServiceService, implementation: identityService(deps) }];
}

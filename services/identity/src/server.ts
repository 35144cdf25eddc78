import { identityV1 } from "@pressroom/contracts";
import { DEMO_API_KEY, type GrpcService } from "@pressroom/platform";
import { identityService, type IdentityDeps } from "./keys/keys.grpc";
import { ensureDemoKey } from "./keys/keys.repository";

/**
 * The identity gRPC service, built from its dependencies. Nothing listens
 * here: main.ts binds it (startGrpcServer, which adds grpc.health.v1 and
 * times every call), and a test can serve it on a port of its own.
 */
export async function createServer(deps: IdentityDeps): Promise<GrpcService[]> {
  await ensureDemoKey(deps.db, deps.secretBox, DEMO_API_KEY);
  return [{ definition: identityV1.IdentityServiceService, implementation: identityService(deps) }];
}

import { identityV1 } from "@pressroom/contracts";
import { DEMO_API_KEY, startGrpcServer, type GrpcServerHandle } from "@pressroom/platform";
import { identityService, type IdentityDeps } from "./keys/keys.grpc";
import { ensureDemoKey } from "./keys/keys.repository";

/** Builds and starts the identity gRPC server from its dependencies. */
export async function createIdentityServer(deps: IdentityDeps, port: number): Promise<GrpcServerHandle> {
  await ensureDemoKey(deps.db, deps.secretBox, DEMO_API_KEY);
  return startGrpcServer({
    port,
    services: [{ definition: identityV1.IdentityServiceService, implementation: identityService(deps) }],
  });
}

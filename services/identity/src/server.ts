import { identityV1 } from "@pressroom/contracts";
import { DEMO_API_KEY, type startGrpcServer } from "@pressroom/platform";
import { identityService, type IdentityDeps } from "./keys/keys.grpc";
import { ensureDemoKey } from "./keys/keys.repository";

/** gRPC services with their implementations, as startGrpcServer takes them. */
export type GrpcServices = Parameters<typeof startGrpcServer>[0]["services"];

/**
 * The identity gRPC service, built from its dependencies. Nothing listens
 * here: main.ts binds it (startGrpcServer, which adds grpc.health.v1 and
 * times every call), and a test can serve it on a port of its own.
 */
export async function createServer(deps: IdentityDeps): Promise<GrpcServices> {
  await ensureDemoKey(deps.db, deps.secretBox, DEMO_API_KEY);
  return [{ definition: identityV1.IdentityServiceService, implementation: identityService(deps) }];
}

import { identityV1 } from "@pressroom/contracts";
import type { GrpcService, MethodCallers } from "@pressroom/platform";
import type { IdentityDeps } from "./deps";
import { identityService } from "./keys/keys.grpc";

/**
 * Who may call each method (the peer named by the caller's certificate;
 * anyone else is answered PERMISSION_DENIED). Minting, revoking and changing
 * keys is the operator's (the admin CLI) and, for a plan paid for, metering's
 * billing; the gateway only authenticates, signs up, and reads or rotates the
 * webhook secret of a key it was sent, or rotates that key (the API key itself, or a console
 * session of it, not an id), and opens, checks and ends console sessions.
 */
export const IDENTITY_CALLERS: MethodCallers<typeof identityV1.IdentityServiceService> = {
  authenticate: ["gateway"],
  signup: ["gateway"],
  createKey: ["admin"],
  revokeKey: ["admin"],
  setPlan: ["admin", "metering"],
  getKey: ["admin", "metering"],
  getWebhookSecret: ["webhook"],
  getOwnWebhookSecret: ["gateway"],
  rotateWebhookSecret: ["gateway"],
  rotateKey: ["gateway"],
  createSession: ["gateway"],
  authenticateSession: ["gateway"],
  deleteSession: ["gateway"],
};

/**
 * The identity gRPC service, built from its dependencies. Nothing listens
 * here: the runner binds it (startGrpcServer, which adds grpc.health.v1
 * and times every call), and a test can serve it on a port of its own.
 */
export function createServer(deps: IdentityDeps): GrpcService[] {
  return [{ definition: identityV1.IdentityServiceService, implementation: identityService(deps), callers: IDENTITY_CALLERS }];
}

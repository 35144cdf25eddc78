import { webhookV1 } from "@pressroom/contracts";
import type { GrpcService, MethodCallers } from "@pressroom/platform";
import type { WebhookDeps } from "./deps";
import { readModelService } from "./read-models/read-models.grpc";

/**
 * Who may call each method (the peer named by the caller's certificate; anyone else is answered
 * PERMISSION_DENIED): the gateway, which lists a key's jobs, daily usage and deliveries and asks
 * for a replay, each for the key of the request it serves.
 */
export const WEBHOOK_CALLERS: MethodCallers<typeof webhookV1.WebhookServiceService> = {
  listJobs: ["gateway"],
  getDailyUsage: ["gateway"],
  listDeliveries: ["gateway"],
  replayDelivery: ["gateway"],
};

/**
 * The WebhookService, built from its dependencies. Nothing listens here: the runner binds it
 * (startGrpcServer, which adds grpc.health.v1 and times every call).
 */
export function createServer(deps: WebhookDeps): GrpcService[] {
  const { db, logger } = deps;
  const { js, jsm } = deps.bus;
  return [{ definition: webhookV1.WebhookServiceService, implementation: readModelService({ db, js, jsm, logger }), callers: WEBHOOK_CALLERS }];
}

import { meteringV1 } from "@pressroom/contracts";
import type { GrpcService, MethodCallers } from "@pressroom/platform";
import { admissionHandlers } from "./admission/admission.grpc";
import { settleFinishedJobs } from "./admission/finished-jobs";
import { publishUsageCorrected } from "./admission/usage-corrected";
import { batchHandlers } from "./batches/batches.grpc";
import { billingHandlers } from "./billing/billing.grpc";
import type { MeteringDeps } from "./deps";

/**
 * Who may call each method (the peer named by the caller's certificate;
 * anyone else is answered PERMISSION_DENIED). The gateway admits, releases
 * and reads usage for the requests it serves, and runs checkouts (whose plan
 * change metering's billing makes itself, after payment); setting usage is the
 * operator's alone.
 */
export const METERING_CALLERS: MethodCallers<typeof meteringV1.MeteringServiceService> = {
  admit: ["gateway"],
  getUsage: ["gateway", "admin"],
  setUsage: ["admin"],
  release: ["gateway"],
  completeIdempotentRequest: ["gateway"],
  getIdempotentRequest: ["gateway"],
  createCheckout: ["gateway"],
  getCheckoutSession: ["gateway"],
  confirmCheckout: ["gateway"],
  handleStripeWebhook: ["gateway"],
  createBatch: ["gateway"],
  getBatch: ["gateway"],
  listBatchItems: ["gateway"],
  cancelBatch: ["gateway"],
};

/**
 * The MeteringService, built from its dependencies: admission's methods and
 * billing's. Nothing listens here: the runner binds it (startGrpcServer,
 * which adds grpc.health.v1 and times every call), and a test can serve it on a
 * port of its own.
 */
export function createServer(deps: MeteringDeps): GrpcService[] {
  const { db, logger } = deps;
  const { js, jsm } = deps.bus;
  const implementation: meteringV1.MeteringServiceServer = {
    ...admissionHandlers({
      db,
      logger,
      leaseSeconds: deps.config.SLOT_LEASE_SECONDS,
      previewLeaseSeconds: deps.config.PREVIEW_LEASE_SECONDS,
      settleFinishedJobs: (keyId) => settleFinishedJobs({ db, jsm, logger }, keyId),
      onUsageCorrected: (correction) => publishUsageCorrected(js, correction),
    }),
    ...batchHandlers({ db, js, dispatcher: deps.batches, ends: deps.batchEnds }),
    ...billingHandlers(deps.billing, logger),
  };
  return [{ definition: meteringV1.MeteringServiceService, implementation, callers: METERING_CALLERS }];
}

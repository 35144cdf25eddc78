/**
 * Metering: admission (rate, quota, concurrency slots), usage,
 * Idempotency-Key records and billing. One gRPC service (server.ts), and the
 * consumer of job events and the sweep (service.ts).
 */
import { identityV1 } from "@pressroom/contracts";
import { consumers, runService, streams } from "@pressroom/platform";
import { BatchEnds } from "./batches/batch-ends";
import { BatchDispatcher } from "./batches/dispatcher";
import { createBilling } from "./billing/create-billing";
import { identityDirectory } from "./billing/identity-client";
import { loadMeteringConfig } from "./config";
import type { MeteringDb } from "./db";
import type { MeteringDeps } from "./deps";
import { createServer } from "./server";
import { createService } from "./service";

runService({
  name: "metering",
  config: loadMeteringConfig,
  connect: async ({ config, logger, database, nats, grpcClient }): Promise<MeteringDeps> => {
    const db = database<MeteringDb>("metering");
    const { JOBS, ACCOUNTS, BATCHES } = streams;
    const needs = [
      { stream: JOBS, name: consumers.meteringJobs },
      { stream: BATCHES, name: consumers.meteringBatches },
    ];
    const bus = await nats({ streams: [JOBS, ACCOUNTS, BATCHES], consumers: needs });
    const identity = grpcClient(identityV1.IdentityServiceClient, config.IDENTITY_ADDR, "identity");
    const batches = new BatchDispatcher({ db, js: bus.js, logger, leaseSeconds: config.SLOT_LEASE_SECONDS, intervalMs: config.BATCH_DISPATCH_INTERVAL_MS });
    const batchEnds = new BatchEnds({ db, js: bus.js, logger });
    return { config, db, bus, logger, billing: createBilling({ db, logger, keys: identityDirectory(identity), config }), batches, batchEnds };
  },
  build: (deps) => ({ grpc: createServer(deps), ...createService(deps) }),
});

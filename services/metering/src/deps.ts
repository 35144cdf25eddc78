import type { Bus, Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { BatchEnds } from "./batches/batch-ends";
import type { BatchDispatcher } from "./batches/dispatcher";
import type { BillingService } from "./billing/billing.service";
import type { Config } from "./config";
import type { MeteringDb } from "./db";

/** What metering's gRPC service and its consumer and sweep are built from; main.ts connects it. */
export interface MeteringDeps {
  config: Readonly<Config>;
  db: Kysely<MeteringDb>;
  bus: Bus;
  logger: Logger;
  billing: BillingService;
  /** Sends batch items to the RENDER queue as their keys' slots free up (batches/dispatcher.ts). */
  batches: BatchDispatcher;
  /** What follows a batch's end: its archive asked for, its end announced (batches/batch-ends.ts). */
  batchEnds: BatchEnds;
}

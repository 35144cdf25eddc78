import type { RecentOutputs } from "@pressroom/domain";
import type { Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { JetStreamClient, JetStreamManager, ObjectStore } from "nats";
import type { StorageDb } from "./db";

/** What storage's gRPC service and its sweep are built from; main.ts connects it, tests build their own. */
export interface StorageDeps {
  db: Kysely<StorageDb>;
  /** Deletes outputs (the sweep). */
  store: ObjectStore;
  /** The bucket behind `store`: render writes the chunks there that registerOutput names, and downloads read them by direct get. */
  bucket: { js: JetStreamClient; jsm: JetStreamManager; name: string };
  logger: Logger;
  publicBaseUrl: string;
  signingSecret: string;
  ttlSeconds: number;
  recentOutputs: RecentOutputs;
  sweepIntervalMs: number;
}

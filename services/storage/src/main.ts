/**
 * Storage: outputs' names, rows and signed URLs (server.ts), their expiry and batches' archives
 * (service.ts); downloads of large outputs get 10 s to end at shutdown.
 */
import { consumers, runService, streams } from "@pressroom/platform";
import { RecentOutputs } from "@pressroom/domain";
import { loadStorageConfig } from "./config";
import type { StorageDb } from "./db";
import type { StorageDeps } from "./deps";
import { openOutputStore } from "./outputs/output-store";
import { createServer } from "./server";
import { createService } from "./service";

runService({
  name: "storage",
  config: loadStorageConfig,
  connect: async ({ config, logger, database, nats }): Promise<StorageDeps> => {
    const db = database<StorageDb>("storage");
    const archives = { stream: streams.BATCHES, name: consumers.storageArchives };
    const { js, jsm } = await nats({ objectStores: [config.OUTPUT_BUCKET], streams: [streams.BATCHES], consumers: [archives] });
    return {
      db,
      store: await openOutputStore(js, config.OUTPUT_BUCKET),
      bucket: { js, jsm, name: config.OUTPUT_BUCKET },
      logger,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      signingSecret: config.OUTPUT_SIGNING_SECRET,
      ttlSeconds: config.OUTPUT_TTL_SECONDS,
      recentOutputs: new RecentOutputs({ maxBytes: config.OUTPUT_CACHE_MAX_BYTES, maxEntryBytes: config.OUTPUT_CACHE_MAX_ENTRY_BYTES }),
      sweepIntervalMs: config.SWEEP_INTERVAL_MS,
    };
  },
  build: (deps) => ({ grpc: createServer(deps), grpcStopMs: 10_000, ...createService(deps) }),
});

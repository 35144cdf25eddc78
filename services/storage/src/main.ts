/** Storage: outputs in the object store (render writes their bytes, storage names them), their rows, signed URLs (server.ts), the expiry sweep (service.ts). */
import { runService } from "@pressroom/platform";
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
    const { js, jsm } = await nats({ objectStores: [config.OUTPUT_BUCKET] });
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
  // Downloads stream outputs of many megabytes: their calls get longer to end than other services'.
  build: (deps) => ({ grpc: createServer(deps), grpcStopMs: 10_000, ...createService(deps) }),
});

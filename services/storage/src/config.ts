import { DEFAULT_PUBLIC_BASE_URL, env, grpcServiceShape, loadConfig, outputStoreShape, z } from "@pressroom/platform";

export const configSchema = z.object({
  ...grpcServiceShape("storage"),
  /** The public base URL that signed output URLs start with. */
  PUBLIC_BASE_URL: z.url().default(DEFAULT_PUBLIC_BASE_URL),
  /** HMAC key for output URLs; shared by every storage replica. */
  OUTPUT_SIGNING_SECRET: env.secret(32),
  /** The outputs' lifetime, and the bucket's name; the provisioning step reads both too. */
  OUTPUT_TTL_SECONDS: outputStoreShape.OUTPUT_TTL_SECONDS,
  OUTPUT_BUCKET: outputStoreShape.OUTPUT_BUCKET,
  SWEEP_INTERVAL_MS: env.int(60_000, 1_000),
  /** Memory for outputs downloaded recently, served to their next downloads without reading the object store, per replica; 0 turns it off. */
  OUTPUT_CACHE_MAX_BYTES: env.int(64 * 1024 * 1024),
  /** Outputs larger than this are not kept in that memory. */
  OUTPUT_CACHE_MAX_ENTRY_BYTES: env.int(8 * 1024 * 1024),
});

export type Config = z.infer<typeof configSchema>;

export const loadStorageConfig = (source: NodeJS.ProcessEnv = process.env): Readonly<Config> => loadConfig(configSchema, source);

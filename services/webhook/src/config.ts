import { destinationSealingKeyShape, env, grpcServiceShape, loadConfig, z } from "@pressroom/platform";

const SECOND = 1_000;
const HOUR = 3_600 * SECOND;

export const configSchema = z
  .object({
    ...grpcServiceShape("webhook"),
    ...destinationSealingKeyShape,
    IDENTITY_ADDR: env.grpcAddr("identity"),
    /** Where a destination's output is read (GetOutput, with the output's signed URL). */
    STORAGE_ADDR: env.grpcAddr("storage"),
    /** A callback succeeds when a 2xx status arrives within this time (connect, TLS and response headers). */
    WEBHOOK_TIMEOUT_MS: env.int(10 * SECOND, 100),
    /** A PUT to a destination succeeds when a 2xx arrives within this time (it uploads a whole document first). */
    WEBHOOK_DESTINATION_TIMEOUT_MS: env.int(60 * SECOND, 100),
    /**
     * The first retry waits a random time in [0, base); each later one doubles
     * the range, up to WEBHOOK_RETRY_CAP_MS (exponential backoff, full jitter).
     * Lowering it is for tests only: production keeps the 5 s default.
     */
    WEBHOOK_RETRY_BASE_MS: env.int(5 * SECOND, 1),
    /** The largest range a single retry wait is drawn from. */
    WEBHOOK_RETRY_CAP_MS: env.int(4 * HOUR, 1),
    /** Retries stop this long after the job finished (the last attempt is made at the end of the window). */
    WEBHOOK_RETRY_WINDOW_MS: env.int(24 * HOUR, 1),
    /** Callbacks in flight at once, per replica. */
    WEBHOOK_CONCURRENCY: env.int(32, 1),
    /**
     * Callbacks in flight at once for one API key, per replica: a key whose
     * endpoint is slow or dead holds at most this many of the replica's
     * WEBHOOK_CONCURRENCY, so it delays only its own callbacks.
     */
    WEBHOOK_PER_KEY_CONCURRENCY: env.int(4, 1),
    /** Development and tests only: lets callbacks go to loopback addresses (127.0.0.0/8, ::1). Off by default. */
    WEBHOOK_ALLOW_LOOPBACK: env.bool(false),
    /** Development and tests only: an extra CA (PEM file) trusted for callbacks, beside the public roots. */
    WEBHOOK_EXTRA_CA_FILE: z.string().min(1).optional(),
    /**
     * Development and tests only, and only together with WEBHOOK_ALLOW_LOOPBACK:
     * connect to this port instead of 443 when the URL's host is loopback
     * (127.0.0.0/8, [::1], localhost; other hosts keep 443). The public API accepts only
     * default-port webhook URLs, and a test receiver cannot listen on 443
     * without root; the Host header and TLS name stay those of the URL.
     */
    WEBHOOK_DEV_TARGET_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  })
  .refine((c) => c.WEBHOOK_DEV_TARGET_PORT === undefined || c.WEBHOOK_ALLOW_LOOPBACK, {
    path: ["WEBHOOK_DEV_TARGET_PORT"],
    message: "is for development and tests only and requires WEBHOOK_ALLOW_LOOPBACK=true",
  });

export type Config = z.infer<typeof configSchema>;

/** Connections of one replica's PostgreSQL pool: one per callback in flight (each holds its delivery's lock), and a few for the projections. */
export const databasePoolSize = (config: Pick<Config, "WEBHOOK_CONCURRENCY">): number => config.WEBHOOK_CONCURRENCY + 4;

export const loadWebhookConfig = (source: NodeJS.ProcessEnv = process.env): Readonly<Config> => loadConfig(configSchema, source);

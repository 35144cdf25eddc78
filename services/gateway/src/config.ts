import {
  baseConfigShape,
  DEFAULT_HEALTH_PORTS,
  DEFAULT_HTTP_PORT,
  grpcTlsShape,
  env,
  loadConfig,
  natsUrlShape,
  sealingPublicKeyShape,
  destinationSealingPublicKeyShape,
  z,
} from "@pressroom/platform";

export const configSchema = z.object({
  ...baseConfigShape,
  ...grpcTlsShape,
  ...natsUrlShape,
  ...sealingPublicKeyShape,
  ...destinationSealingPublicKeyShape,
  HTTP_PORT: env.port(DEFAULT_HTTP_PORT),
  HTTP_HOST: z.string().default("0.0.0.0"),
  /** /livez, /readyz and /metrics, apart from the API port (which also answers /livez and /readyz). */
  HEALTH_PORT: env.port(DEFAULT_HEALTH_PORTS.gateway),
  IDENTITY_ADDR: env.grpcAddr("identity"),
  METERING_ADDR: env.grpcAddr("metering"),
  RENDER_ADDR: env.grpcAddr("render"),
  STORAGE_ADDR: env.grpcAddr("storage"),
  WEBHOOK_ADDR: env.grpcAddr("webhook"),
  /** How long a successful authentication is reused; a revocation takes effect within this time. */
  AUTH_CACHE_MS: env.int(2_000, 0),
  /** How often a known template is refreshed from the catalog; a new version is used within about this time. */
  TEMPLATE_REFRESH_MS: env.int(10_000, 100),
  /** How long a sync request waits for its job before answering 202 with the job's Location. */
  SYNC_WAIT_MS: env.int(60_000, 1_000),
  /** Threads that compile and run customers' data schemas and check raw HTML's Handlebars (each task within its time budget, off the event loop). */
  SCHEMA_THREADS: env.int(2, 1),
  /** Reads without a key (the catalog, a public template or preview, the gallery's pages) one client address may make a minute, per replica. */
  ANONYMOUS_READS_PER_MINUTE: env.int(120, 1),
  /** Comma-separated proxy addresses whose X-Forwarded-For is trusted for the client IP. */
  TRUSTED_PROXIES: z.string().default(""),
  MAX_BODY_BYTES: env.int(2 * 1024 * 1024, 1024),
  /**
   * DEVELOPMENT/TEST ONLY, as the webhook service's setting of the same name: a webhook_url on a loopback address
   * (127.0.0.0/8, ::1, a name resolving there) is accepted, where it is otherwise refused with the request.
   */
  WEBHOOK_ALLOW_LOOPBACK: env.bool(false),
  /**
   * Memory for the outputs render announces with a sync job's end (see render's
   * RENDER_ANNOUNCED_OUTPUT_MAX_BYTES), per replica: the document answer and the URL's
   * first downloads come from it instead of storage; 0 turns it off.
   */
  OUTPUT_CACHE_MAX_BYTES: env.int(32 * 1024 * 1024),
});

export type Config = z.infer<typeof configSchema>;

export const loadGatewayConfig = (source: NodeJS.ProcessEnv = process.env): Readonly<Config> => loadConfig(configSchema, source);

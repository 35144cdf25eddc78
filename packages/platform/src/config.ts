import { accessSync, constants } from "node:fs";
import { z } from "zod";

export { z };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

/**
 * Parses the environment once against a zod object schema whose keys are the
 * variable names. Fails fast with every offending variable named, and returns
 * a frozen result.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): Readonly<z.infer<S>> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`));
  }
  return Object.freeze(parsed.data);
}

/**
 * Where each piece listens on one machine: the services' defaults, the local
 * stack's ports and the operator CLI's addresses. The one place they are written.
 */
export const DEFAULT_NATS_URL = "nats://127.0.0.1:4222";
/** The gateway's API port, and the public base URL the services name in links by default. */
export const DEFAULT_HTTP_PORT = 8080;
export const DEFAULT_PUBLIC_BASE_URL = `http://localhost:${DEFAULT_HTTP_PORT}`;
export const DEFAULT_GRPC_PORTS = { identity: 7001, metering: 7002, render: 7003, storage: 7004, webhook: 7005 } as const;
export type GrpcServerName = keyof typeof DEFAULT_GRPC_PORTS;
/** Each service's health port (/livez, /readyz, /metrics) in the local stack; the gateway's is its default too. */
export const DEFAULT_HEALTH_PORTS = { gateway: 9461, identity: 9462, metering: 9463, render: 9464, storage: 9465, webhook: 9466 } as const;

/** The address a client finds a gRPC server at when nothing else is said: its default port on this machine. */
export const defaultGrpcAddr = (server: GrpcServerName): string => `127.0.0.1:${DEFAULT_GRPC_PORTS[server]}`;

/** Building blocks shared by the services' config schemas. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  url: (fallback?: string) => (fallback === undefined ? z.url() : z.url().default(fallback)),
  bool: (fallback: boolean) =>
    z
      .enum(["true", "false", "1", "0", "yes", "no"])
      .default(fallback ? "true" : "false")
      .transform((v) => v === "true" || v === "1" || v === "yes"),
  int: (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback),
  logLevel: () => z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  secret: (minLength = 32) => z.string().min(minLength, `must be at least ${minLength} characters`),
  /** A gRPC server's own port, by default its port on this machine. */
  grpcPort: (server: GrpcServerName) => env.port(DEFAULT_GRPC_PORTS[server]),
  /** A gRPC server's address (host:port), by default on this machine. */
  grpcAddr: (server: GrpcServerName) => z.string().min(1).default(defaultGrpcAddr(server)),
};

/** NATS_URL: the NATS servers, comma-separated. Every service and the provisioning step read it. */
export const natsUrlShape = {
  NATS_URL: z.string().min(1).default(DEFAULT_NATS_URL),
};

/** Variables every service reads. */
export const baseConfigShape = {
  LOG_LEVEL: env.logLevel(),
  HEALTH_PORT: env.port(0),
  /** Where /livez, /readyz and /metrics listen: loopback, like gRPC; a container's 0.0.0.0 (the chart sets it) for the kubelet and Prometheus. */
  HEALTH_HOST: z.string().min(1).default("127.0.0.1"),
  SHUTDOWN_TIMEOUT_MS: env.int(20_000, 1000),
  /**
   * How long a stopping service keeps serving, not ready, before it stops accepting: the time the
   * endpoints and load balancers in front of it take to stop sending it requests (part of SHUTDOWN_TIMEOUT_MS).
   */
  SHUTDOWN_DELAY_MS: env.int(0),
  /** This service's NATS user and password, where the server requires them (the chart's per-service users). */
  NATS_USER: z.string().min(1).optional(),
  NATS_PASSWORD: z.string().optional(),
};

/**
 * The bounds on a job's life, read alike by render, metering and the provisioning step
 * (see jobOverdueAfterMs): a render runs at most RENDER_DEADLINE_MS (template expansion
 * included), and a render command is kept in the RENDER queue at most
 * RENDER_MAX_QUEUE_WAIT_MS from its publication, its retries included (the stream's max age).
 */
export const jobBoundsShape = {
  RENDER_DEADLINE_MS: env.int(30_000, 1_000),
  RENDER_MAX_QUEUE_WAIT_MS: env.int(60 * 60_000, 1_000),
};

const readableFile = (what: string) =>
  z
    .string({ error: `required: the path of ${what}` })
    .min(1, `required: the path of ${what}`)
    .refine(
      (file) => {
        try {
          accessSync(file, constants.R_OK);
          return true;
        } catch {
          return false;
        }
      },
      { error: `cannot read ${what} at this path` },
    );

/**
 * Every gRPC hop is mutual TLS (see grpc.ts): the deployment's CA, and this
 * service's own certificate and key (PEM files), which it presents as a
 * server and as a client, read again every minute.
 */
export const grpcTlsShape = {
  GRPC_TLS_CA: readableFile("the CA certificate that signs every service's certificate"),
  GRPC_TLS_CERT: readableFile("the certificate this process presents"),
  GRPC_TLS_KEY: readableFile("the private key of that certificate"),
};

/**
 * The key pair a job's secrets are sealed to (sealing.ts; @pressroom/domain's job-secrets.ts):
 * render holds the private key (PEM) and opens them; the gateway holds only its public half (a
 * PEM public key or a certificate of it) and seals them.
 */
export const sealingKeyShape = {
  SEALING_KEY: readableFile("render's private sealing key, which opens the jobs' sealed secrets"),
};
export const sealingPublicKeyShape = {
  SEALING_PUBLIC_KEY: readableFile("render's public sealing key (or a certificate of it), which the jobs' secrets are sealed to"),
};

/**
 * The key pair a job's destination (its url and headers) is sealed to, apart from render's: the
 * webhook service, which PUTs the output, holds the private key (PEM) and opens it; the gateway
 * holds only its public half and seals it. Render, which only passes the destination on, holds neither.
 */
export const destinationSealingKeyShape = {
  DESTINATION_SEALING_KEY: readableFile("the webhook service's private sealing key, which opens the jobs' sealed destinations"),
};
export const destinationSealingPublicKeyShape = {
  DESTINATION_SEALING_PUBLIC_KEY: readableFile("the webhook service's public sealing key (or a certificate of it), which the jobs' destinations are sealed to"),
};

/**
 * The settings every gRPC-serving service with a database reads (identity, metering, render,
 * storage, webhook): the base, mutual TLS, where its gRPC server listens (loopback by default, every
 * interface where the chart says so, on its own default port), its database and NATS.
 */
export const grpcServiceShape = (server: GrpcServerName) => ({
  ...baseConfigShape,
  ...grpcTlsShape,
  GRPC_HOST: z.string().min(1).default("127.0.0.1"),
  GRPC_PORT: env.grpcPort(server),
  DATABASE_URL: z.string().min(1),
  /** The most PostgreSQL connections one replica's pool opens: times the replicas, within the server's max_connections (docs/capacity.md). */
  DATABASE_POOL_MAX: env.int(10, 1),
  ...natsUrlShape,
});

/** Storage's output bucket when OUTPUT_BUCKET is not set. */
export const DEFAULT_OUTPUT_BUCKET = "outputs";

/**
 * The longest an output may live when its request asks (options.output_ttl_seconds, within the
 * key's plan): 7 days. The bucket keeps objects at least this long (see provisionTopology).
 */
export const MAX_OUTPUT_TTL_SECONDS = 604_800;

/** Storage's output bucket settings, which the provisioning step reads too. */
export const outputStoreShape = {
  OUTPUT_TTL_SECONDS: env.int(86_400, 60),
  OUTPUT_BUCKET: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default(DEFAULT_OUTPUT_BUCKET),
};

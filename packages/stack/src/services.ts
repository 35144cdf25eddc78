import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync, readdirSync, readFileSync, type WriteStream } from "node:fs";
import path from "node:path";
import { DEFAULT_GRPC_PORTS, DEFAULT_HEALTH_PORTS, DEFAULT_HTTP_PORT, grpcTlsEnv, type GrpcCertificates, type SealingKeyFiles } from "@pressroom/platform";
import { distinctFreePorts, waitFor } from "./ports";
import { DATABASE_SERVICES, type DatabaseCredentials, type DatabaseService } from "./postgres";

export const REPO_ROOT = path.resolve(__dirname, "..", "..", "..");

export const SERVICE_NAMES = ["identity", "storage", "metering", "render", "webhook", "gateway"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export interface StackPorts {
  http: number;
  grpc: Record<"identity" | "metering" | "render" | "storage" | "webhook", number>;
  health: Record<ServiceName, number>;
}

/** The local ports: each service's health port also serves its /metrics. */
export const DEFAULT_PORTS: StackPorts = {
  http: DEFAULT_HTTP_PORT,
  grpc: { ...DEFAULT_GRPC_PORTS },
  health: { ...DEFAULT_HEALTH_PORTS },
};

/** DEFAULT_PORTS with each health port overridden by `<SERVICE>_HEALTH_PORT` (e.g. GATEWAY_HEALTH_PORT) where set. */
export function localPorts(env: NodeJS.ProcessEnv): StackPorts {
  const health = { ...DEFAULT_PORTS.health };
  for (const name of SERVICE_NAMES) {
    const value = env[`${name.toUpperCase()}_HEALTH_PORT`];
    if (value !== undefined) health[name] = Number(value);
  }
  return { ...DEFAULT_PORTS, health };
}

export async function freePorts(): Promise<StackPorts> {
  const [http, ...p] = (await distinctFreePorts(12)) as [number, ...number[]];
  return {
    http,
    grpc: { identity: p[0]!, metering: p[1]!, render: p[2]!, storage: p[3]!, webhook: p[10]! },
    health: { identity: p[4]!, metering: p[5]!, render: p[6]!, storage: p[7]!, webhook: p[8]!, gateway: p[9]! },
  };
}

export interface ServiceProcess {
  name: ServiceName;
  child: ChildProcess;
  env: NodeJS.ProcessEnv;
  /** Everything the process wrote (stdout and stderr), for leak checks and debugging. */
  output: string[];
}

export interface StackOptions {
  /** Each service's own database URL (its role's): the gateway has none. */
  databaseUrls: Record<DatabaseService, string>;
  natsUrl: string;
  ports: StackPorts;
  logDir: string;
  /** The deployment's CA and each service's certificate (ensureGrpcCertificates): a service is given only its own. */
  certificates: GrpcCertificates;
  /** Render's sealing key pair (ensureSealingKey): render is given the private key, the gateway the public one. */
  sealingKey: SealingKeyFiles;
  /**
   * The webhook service's sealing key pair, for destinations (ensureSealingKey, "destination-sealing"):
   * the webhook service is given the private key, the gateway the public one.
   */
  destinationSealingKey: SealingKeyFiles;
  publicBaseUrl?: string;
  signingSecret?: string;
  /** Identity's WEBHOOK_SECRET_ENCRYPTION_KEY (64 hex characters), needed to start identity: the one runMigrations sealed the demo key's secret with. */
  secretEncryptionKey?: string;
  /** Extra environment for every service, or per service. */
  env?: NodeJS.ProcessEnv;
  serviceEnv?: Partial<Record<ServiceName, NodeJS.ProcessEnv>>;
  /** Echo service output to this stream with a [service] prefix. */
  echo?: NodeJS.WritableStream;
}

function missingKey(): never {
  throw new Error("identity needs secretEncryptionKey: the key runMigrations sealed the demo key's webhook secret with");
}

function serviceEntry(name: ServiceName, file: "main" | "migrate"): string {
  return path.join(REPO_ROOT, "services", name, "dist", `${file}.js`);
}

/**
 * The services' own settings that have no prefix of their service (each
 * service's README lists its settings; test/src/service-settings.test.ts
 * checks that every one is either here, prefixed, or wiring the stack sets).
 */
export const UNPREFIXED_SETTINGS = [
  // every service
  "SHUTDOWN_TIMEOUT_MS",
  "SHUTDOWN_DELAY_MS",
  // gateway
  "AUTH_CACHE_MS",
  "TEMPLATE_REFRESH_MS",
  "SYNC_WAIT_MS",
  "SCHEMA_THREADS",
  "ANONYMOUS_READS_PER_MINUTE",
  "TRUSTED_PROXIES",
  "MAX_BODY_BYTES",
  "OUTPUT_CACHE_MAX_BYTES",
  // identity
  "SIGNUP_LIMIT_PER_HOUR",
  // metering
  "SLOT_LEASE_SECONDS",
  "PREVIEW_LEASE_SECONDS",
  "CHECKOUT_TTL_SECONDS",
  "SWEEP_INTERVAL_MS",
  "BATCH_DISPATCH_INTERVAL_MS",
  "DATABASE_POOL_MAX",
  "BILLING_PROVIDER",
  // render
  "CHROMIUM_PATH",
  "SUBREQUEST_TIMEOUT_MS",
  "WORKER_NAME",
  // storage (and the provisioning step: the output bucket)
  "OUTPUT_TTL_SECONDS",
  "OUTPUT_BUCKET",
  "OUTPUT_CACHE_MAX_ENTRY_BYTES",
];

/** What the stack sets itself: addresses, ports, the database, NATS, the public URL and the secrets it makes. */
export const STACK_WIRING = /^(RENDER_ADDR|OTEL_SERVICE_NAME|WEBHOOK_ADDR|WEBHOOK_SECRET_ENCRYPTION_KEY)$|_HEALTH_PORT$/;

/**
 * The services' own settings found in an environment (up.sh's caller's):
 * RENDER_*, WEBHOOK_*, OTEL_*, STRIPE_* and UNPREFIXED_SETTINGS, minus the
 * wiring the stack sets itself (STACK_WIRING; `<SERVICE>_HEALTH_PORT` is
 * up.sh's own, see localPorts).
 */
export function forwardedSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const unprefixed = new Set(UNPREFIXED_SETTINGS);
  return Object.fromEntries(
    Object.entries(env).filter(
      ([name, value]) => value !== undefined && !STACK_WIRING.test(name) && (/^(RENDER_|WEBHOOK_|OTEL_|STRIPE_)[A-Z0-9_]+$/.test(name) || unprefixed.has(name)),
    ),
  );
}

/**
 * The line up.sh starts with about billing: the stack runs metering with the local payment
 * provider (see serviceEnv), whose checkout upgrades a key without payment, unless the
 * caller's environment names another.
 */
export function billingNotice(env: NodeJS.ProcessEnv): string {
  const provider = forwardedSettings(env).BILLING_PROVIDER ?? "local";
  if (provider !== "local") return `billing: the ${provider} payment provider (BILLING_PROVIDER)`;
  return "billing: the local payment provider, for development: its checkout page upgrades a key to any plan WITHOUT payment (BILLING_PROVIDER=stripe for Stripe; the chart refuses local unless billing.local.allowFreeUpgrades=true)";
}

export function serviceEnv(name: ServiceName, options: StackOptions): NodeJS.ProcessEnv {
  const { ports } = options;
  const publicBaseUrl = options.publicBaseUrl ?? `http://127.0.0.1:${ports.http}`;
  const addr = (port: number) => `127.0.0.1:${port}`;
  const common: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
    ...(name === "gateway" ? {} : { DATABASE_URL: options.databaseUrls[name] }),
    NATS_URL: options.natsUrl,
    OTEL_SERVICE_NAME: name,
    HEALTH_PORT: String(ports.health[name]),
    IDENTITY_ADDR: addr(ports.grpc.identity),
    METERING_ADDR: addr(ports.grpc.metering),
    RENDER_ADDR: addr(ports.grpc.render),
    STORAGE_ADDR: addr(ports.grpc.storage),
    WEBHOOK_ADDR: addr(ports.grpc.webhook),
    PUBLIC_BASE_URL: publicBaseUrl,
    ...grpcTlsEnv(options.certificates[name]),
    ...options.env,
  };
  const own: Record<ServiceName, NodeJS.ProcessEnv> = {
    identity: {
      GRPC_PORT: String(ports.grpc.identity),
      ...(name === "identity" ? { WEBHOOK_SECRET_ENCRYPTION_KEY: options.secretEncryptionKey ?? missingKey() } : {}),
    },
    // The stack is for development and tests: the local payment provider, unless the caller's environment names one.
    metering: { GRPC_PORT: String(ports.grpc.metering), BILLING_PROVIDER: options.env?.BILLING_PROVIDER ?? "local" },
    render: { GRPC_PORT: String(ports.grpc.render), SEALING_KEY: options.sealingKey.key },
    storage: { GRPC_PORT: String(ports.grpc.storage), OUTPUT_SIGNING_SECRET: options.signingSecret ?? randomBytes(32).toString("hex") },
    webhook: { GRPC_PORT: String(ports.grpc.webhook), DESTINATION_SEALING_KEY: options.destinationSealingKey.key },
    gateway: {
      HTTP_PORT: String(ports.http),
      HTTP_HOST: "127.0.0.1",
      SEALING_PUBLIC_KEY: options.sealingKey.publicKey,
      DESTINATION_SEALING_PUBLIC_KEY: options.destinationSealingKey.publicKey,
      // The gateway refuses with the request a webhook_url the webhook service would refuse: the same loopback allowance.
      ...(options.serviceEnv?.webhook?.WEBHOOK_ALLOW_LOOPBACK ? { WEBHOOK_ALLOW_LOOPBACK: options.serviceEnv.webhook.WEBHOOK_ALLOW_LOOPBACK } : {}),
    },
  };
  return { ...common, ...own[name], ...options.serviceEnv?.[name] };
}

/** Runs a one-off entrypoint to its end; rejects with its output when it fails. */
function runStep(what: string, entry: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ["--enable-source-maps", entry], {
      env: { PATH: process.env.PATH, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${what} failed:\n${output}`))));
  });
}

/**
 * Runs every service's migrate entrypoint (what the chart's provision Job
 * does first), in parallel: each makes its service's role and schema with the
 * admin URL, migrates as that role, and seeds what it needs (identity the demo
 * key, sealed with `secretEncryptionKey`, the key the services get; render the
 * built-in templates).
 */
export async function runMigrations(database: DatabaseCredentials, secretEncryptionKey: string): Promise<void> {
  const env = (name: DatabaseService): NodeJS.ProcessEnv => ({
    DATABASE_URL: database.urls[name],
    DATABASE_ADMIN_URL: database.adminUrl,
    ...(name === "identity" ? { WEBHOOK_SECRET_ENCRYPTION_KEY: secretEncryptionKey } : {}),
  });
  await Promise.all(DATABASE_SERVICES.map((name) => runStep(`migrations of ${name}`, serviceEntry(name, "migrate"), env(name))));
}

/**
 * Runs the one-off NATS provisioning step (what the chart's provision Job
 * does after the migrations): streams, consumers and the output bucket.
 * Services started before it stay not ready until it has run.
 */
export function provisionNats(natsUrl: string, env: NodeJS.ProcessEnv = {}): Promise<void> {
  return runStep("NATS provisioning", path.join(REPO_ROOT, "packages", "platform", "dist", "nats", "provision-main.js"), { NATS_URL: natsUrl, ...env });
}

/** How long a stopping service may take (its own shutdown bound, SHUTDOWN_TIMEOUT_MS, is 20 s) before it is killed. */
export const STOP_GRACE_MS = 22_000;

const STOP_ORDER: readonly (readonly ServiceName[])[] = [["gateway"], ["render", "webhook"], ["metering", "storage", "identity"]];

/** Every live descendant of a process (render's Chromium and its helpers), read from /proc. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

function killPids(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/**
 * Stops a service and everything it started: SIGTERM, then SIGKILL once
 * graceMs have passed (at once for 0), so a stuck service cannot hold a stop.
 * Its descendants (render's Chromium) are noted while it runs and killed
 * once it has exited, in case it could not close them itself. Resolves when
 * the service has exited.
 */
export function stopService(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const descendants = new Set(descendantsOf(child.pid!));
  return new Promise((resolve) => {
    const kill = () => {
      for (const pid of descendantsOf(child.pid!)) descendants.add(pid);
      child.kill("SIGKILL");
    };
    const timer = setTimeout(kill, graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      killPids(descendants);
      resolve();
    });
    if (graceMs === 0) kill();
    else child.kill("SIGTERM");
  });
}

/** Starts one service as its own process, preloading telemetry. */
export function startService(name: ServiceName, env: NodeJS.ProcessEnv, logDir: string, echo?: NodeJS.WritableStream): ServiceProcess {
  mkdirSync(logDir, { recursive: true });
  const log: WriteStream = createWriteStream(path.join(logDir, `${name}.log`), { flags: "a" });
  const child = spawn(process.execPath, ["--enable-source-maps", "--require", "@pressroom/platform/telemetry", serviceEntry(name, "main")], {
    cwd: path.join(REPO_ROOT, "services", name),
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const collect = (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    output.push(text);
    log.write(text);
    if (echo) for (const line of text.split("\n")) if (line) echo.write(`[${name}] ${line}\n`);
  };
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  child.once("exit", () => log.end());
  return { name, child, env, output };
}

/** Polls readiness every 20 ms, so that a start-up is timed to within a few ms (the startup bench uses this). */
export async function waitReady(name: ServiceName, healthPort: number, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    `${name} readiness on :${healthPort}`,
    async () => {
      if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode} before it was ready`);
      const response = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
      return response.ok;
    },
    timeoutMs,
    20,
  );
}

export interface RunningServices {
  processes: Map<ServiceName, ServiceProcess>;
  stop(): Promise<void>;
  /** Kills one service and what it started abruptly (SIGKILL) and returns once it is gone. */
  kill(name: ServiceName): Promise<void>;
  /** Kills every service at once (SIGKILL), for a stop that must not wait. */
  killAll(): Promise<void>;
  /** Starts a stopped or killed service again and waits until it is ready. */
  restart(name: ServiceName): Promise<void>;
}

/**
 * Starts the six services, each as its own process, all at once: gRPC
 * clients connect lazily, so no service needs another to be up to start.
 */
export async function startServices(options: StackOptions, only: readonly ServiceName[] = SERVICE_NAMES): Promise<RunningServices> {
  const processes = new Map<ServiceName, ServiceProcess>();
  const launch = async (name: ServiceName) => {
    const env = serviceEnv(name, options);
    const proc = startService(name, env, options.logDir, options.echo);
    processes.set(name, proc);
    await waitReady(name, options.ports.health[name], proc.child).catch((err: Error) => {
      throw new Error(`${err.message}\n--- ${name} output ---\n${proc.output.join("").slice(-4000)}`);
    });
  };
  const running: RunningServices = {
    processes,
    async stop() {
      // The edge first, so that no new work comes in; then the workers, whose work in flight still
      // needs the others; then those, side by side within each step.
      for (const step of STOP_ORDER) {
        await Promise.all(step.filter((name) => processes.has(name)).map((name) => stopService(processes.get(name)!.child, STOP_GRACE_MS)));
      }
    },
    async kill(name) {
      const proc = processes.get(name);
      if (proc) await stopService(proc.child, 0);
    },
    async killAll() {
      await Promise.all([...processes.values()].map((proc) => stopService(proc.child, 0)));
    },
    async restart(name) {
      const previous = processes.get(name);
      await launch(name);
      if (previous) processes.get(name)!.output.unshift(...previous.output);
    },
  };
  try {
    await Promise.all(SERVICE_NAMES.filter((name) => only.includes(name)).map(launch));
  } catch (err) {
    await running.stop();
    throw err;
  }
  return running;
}

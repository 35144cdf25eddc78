import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startPrivateNats, type PrivateNats } from "./nats";
import { DEFAULT_DATABASE_URL, createDatabase, databaseCredentials, dropDatabase, postgresAnswers, type DatabaseService } from "./postgres";
import {
  NATS_COMPONENTS,
  ensureGrpcCertificates,
  ensureSealingKey,
  natsAuthorization,
  type GrpcCertificates,
  type NatsComponent,
  type SealingKeyFiles,
} from "@pressroom/platform";
import {
  SERVICE_NAMES,
  freePorts,
  provisionNats,
  runMigrations,
  startServices,
  type RunningServices,
  type ServiceName,
  type StackOptions,
  type StackPorts,
} from "./services";

export interface TestStack {
  baseUrl: string;
  /** The admin's URL of the stack's database (the migrate step's; no service has it). */
  databaseUrl: string;
  /** Each service's own URL: its role, which owns its schema and nothing else. */
  databaseUrls: Record<DatabaseService, string>;
  natsUrl: string;
  /** Each component's NATS password, with natsUsers. */
  natsPasswords?: Record<NatsComponent, string>;
  nats: PrivateNats;
  ports: StackPorts;
  /** The stack's own CA and every gRPC peer's certificate (the services', and `admin` for operator calls). */
  certificates: GrpcCertificates;
  /** Render's sealing key pair, beside the certificates (the gateway seals the jobs' secrets to it). */
  sealingKey: SealingKeyFiles;
  /** The webhook service's sealing key pair, beside it (the gateway seals the jobs' destinations to it). */
  destinationSealingKey: SealingKeyFiles;
  services: RunningServices;
  signingSecret: string;
  /** Identity's sealing key, the one the migrations seeded with (to run them again: runMigrations). */
  secretEncryptionKey: string;
  /** All output the services wrote so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * The PostgreSQL server tests use: DATABASE_URL when set, else the local
 * default. Fails with instructions when none answers.
 */
export async function testDatabaseServer(): Promise<string> {
  const url = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  if (!(await postgresAnswers(url))) {
    throw new Error(
      `PostgreSQL does not answer at ${new URL(url).host}. Start it (pg_ctlcluster <version> main start, or ./scripts/up.sh which starts a private one) or set DATABASE_URL.`,
    );
  }
  return url;
}

/** A fresh database on the test server (or on `server`); dropped, with its services' roles, by the returned function. */
export async function isolatedDatabase(prefix = "pressroom_test", server?: string): Promise<{ url: string; drop(): Promise<void> }> {
  server ??= await testDatabaseServer();
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const url = await createDatabase(server, name);
  return { url, drop: () => dropDatabase(server, name) };
}

/**
 * Boots an isolated Pressroom: its own database, its own nats-server on a
 * free port, the six services as separate processes on free ports.
 */
export async function startTestStack(
  options: Partial<Pick<StackOptions, "env" | "serviceEnv">> & {
    only?: ServiceName[];
    /** A PostgreSQL server of the test's own (default: the test server). */
    databaseServer?: string;
    /** NATS users: each component connects as itself, allowed only what natsPermissions() lists. */
    natsUsers?: boolean;
  } = {},
): Promise<TestStack> {
  const workDir = mkdtempSync(path.join(tmpdir(), "pressroom-test-"));
  const database = await isolatedDatabase("pressroom_test", options.databaseServer);
  const credentials = databaseCredentials(database.url, () => randomBytes(16).toString("hex"));
  const natsPasswords = options.natsUsers
    ? (Object.fromEntries(NATS_COMPONENTS.map((component) => [component, randomBytes(16).toString("hex")])) as Record<NatsComponent, string>)
    : undefined;
  const natsEnv = (component: NatsComponent): NodeJS.ProcessEnv => (natsPasswords ? { NATS_USER: component, NATS_PASSWORD: natsPasswords[component] } : {});
  const nats = await startPrivateNats(
    path.join(workDir, "nats"),
    natsPasswords ? { config: natsAuthorization(natsPasswords), credentials: { user: "provision", pass: natsPasswords.provision } } : {},
  );
  const serviceEnv = Object.fromEntries(SERVICE_NAMES.map((name) => [name, { ...natsEnv(name), ...options.serviceEnv?.[name] }]));
  const [ports, certificates] = await Promise.all([freePorts(), ensureGrpcCertificates(path.join(workDir, "grpc-tls"))]);
  const sealingKey = ensureSealingKey(path.join(workDir, "grpc-tls"));
  const destinationSealingKey = ensureSealingKey(path.join(workDir, "grpc-tls"), "destination-sealing");
  const signingSecret = randomBytes(32).toString("hex");
  // Kept for the stack's life, so that a restarted identity opens the secrets it sealed.
  const secretEncryptionKey = randomBytes(32).toString("hex");
  let services: RunningServices | undefined;
  try {
    await Promise.all([runMigrations(credentials, secretEncryptionKey), provisionNats(nats.url, { ...options.env, ...natsEnv("provision") })]);
    services = await startServices(
      {
        databaseUrls: credentials.urls,
        natsUrl: nats.url,
        ports,
        logDir: path.join(workDir, "logs"),
        certificates,
        sealingKey,
        destinationSealingKey,
        signingSecret,
        secretEncryptionKey,
        env: { LOG_LEVEL: "info", RENDER_SLOTS: "2", ...options.env },
        serviceEnv,
      },
      options.only,
    );
  } catch (err) {
    await nats.stop();
    await database.drop().catch(() => undefined);
    throw err;
  }
  const running = services;
  return {
    baseUrl: `http://127.0.0.1:${ports.http}`,
    databaseUrl: database.url,
    databaseUrls: credentials.urls,
    natsUrl: nats.url,
    natsPasswords,
    nats,
    ports,
    certificates,
    sealingKey,
    destinationSealingKey,
    services: running,
    signingSecret,
    secretEncryptionKey,
    output: () => [...running.processes.values()].map((p) => p.output.join("")).join(""),
    async stop() {
      await running.stop();
      await nats.stop();
      await database.drop().catch(() => undefined);
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}

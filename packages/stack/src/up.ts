import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DEMO_API_KEY } from "@pressroom/domain";
import { jetstreamAnswers, startPrivateNats, type PrivateNats } from "./nats";
import { DEFAULT_NATS_URL, ensureGrpcCertificates, ensureSealingKey } from "@pressroom/platform";
import { ensureListenerCertificate, listenPort, listenerSettings } from "./webhook-listener";
import { DEFAULT_DATABASE_URL, createDatabase, databaseCredentials, postgresAnswers, startPrivatePostgres, type PrivatePostgres } from "./postgres";
import {
  REPO_ROOT,
  SERVICE_NAMES,
  STOP_GRACE_MS,
  billingNotice,
  forwardedSettings,
  localPorts,
  provisionNats,
  runMigrations,
  startServices,
  type RunningServices,
} from "./services";

const DATA_DIR = path.join(REPO_ROOT, ".data");

function say(message: string): void {
  process.stdout.write(`pressroom: ${message}\n`);
}

/** A signing secret kept across runs, so links from an earlier run stay valid. */
/** A secret made once and kept under .data, so that restarts keep what it signed or sealed. */
function keptSecret(name: string): string {
  const file = path.join(DATA_DIR, name);
  if (!existsSync(file)) {
    mkdirSync(DATA_DIR, { recursive: true });
    writeFileSync(file, randomBytes(32).toString("hex"), { mode: 0o600 });
  }
  return readFileSync(file, "utf8").trim();
}

async function main(): Promise<void> {
  let privatePostgres: PrivatePostgres | undefined;
  let privateNats: PrivateNats | undefined;
  let services: RunningServices | undefined;
  let stopping = false;

  const stop = async (code: number) => {
    if (stopping) {
      say("stopping now (SIGKILL)");
      void services?.killAll();
      return;
    }
    stopping = true;
    say(`stopping… (a service still running after ${STOP_GRACE_MS / 1000} s is killed; Ctrl-C again kills them all now)`);
    await services?.stop();
    await privateNats?.stop();
    privatePostgres?.stop();
    say("stopped");
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));

  say(billingNotice(process.env));
  try {
    let serverUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
    if (await postgresAnswers(serverUrl)) {
      say(`using PostgreSQL at ${new URL(serverUrl).host}`);
    } else {
      say(`no PostgreSQL at ${new URL(serverUrl).host}; starting a private one under .data/postgres`);
      privatePostgres = await startPrivatePostgres(path.join(DATA_DIR, "postgres"));
      serverUrl = privatePostgres.url;
    }
    // The admin's URL: only the migrate step gets it; each service logs in as its own role, with a password kept under .data.
    const database = databaseCredentials(process.env.DATABASE_URL ?? (await createDatabase(serverUrl, "pressroom")), (service) =>
      keptSecret(`database-password-${service}`),
    );

    let natsUrl = process.env.NATS_URL ?? DEFAULT_NATS_URL;
    if (await jetstreamAnswers(natsUrl)) {
      say(`using NATS JetStream at ${new URL(natsUrl).host}`);
    } else {
      say(`no NATS JetStream at ${new URL(natsUrl).host}; starting a private one under .data/nats`);
      privateNats = await startPrivateNats(path.join(DATA_DIR, "nats"));
      natsUrl = privateNats.url;
    }

    say("running migrations and provisioning NATS");
    const secretEncryptionKey = keptSecret("webhook-secret-encryption-key");
    await Promise.all([runMigrations(database, secretEncryptionKey), provisionNats(natsUrl, forwardedSettings(process.env))]);
    // The private CA and a certificate per service and for the operator CLI: every gRPC hop is mutual TLS.
    const certificates = await ensureGrpcCertificates(path.join(DATA_DIR, "grpc-tls"));
    // Render's sealing key pair, beside them: the gateway seals the jobs' secrets to it, render opens them.
    const sealingKey = ensureSealingKey(path.join(DATA_DIR, "grpc-tls"));
    // The webhook service's, for destinations: the gateway seals a job's destination to it, the webhook service opens it to PUT.
    const destinationSealingKey = ensureSealingKey(path.join(DATA_DIR, "grpc-tls"), "destination-sealing");
    const ports = localPorts(process.env);
    const baseUrl = process.env.PUBLIC_BASE_URL ?? `http://localhost:${ports.http}`;
    // Development only: the webhook service trusts `npm run webhooks:listen` and sends loopback callbacks to its port.
    const listener = listenerSettings(ensureListenerCertificate(path.join(DATA_DIR, "webhook-listen")), listenPort(process.env));
    say("starting identity, storage, metering, render, webhook and gateway");
    services = await startServices({
      databaseUrls: database.urls,
      natsUrl,
      ports,
      logDir: path.join(DATA_DIR, "logs"),
      certificates,
      sealingKey,
      destinationSealingKey,
      publicBaseUrl: baseUrl,
      signingSecret: keptSecret("output-signing-secret"),
      secretEncryptionKey,
      env: { RENDER_SLOTS: "2", ...listener, ...forwardedSettings(process.env) },
      echo: process.env.PRESSROOM_QUIET ? undefined : process.stderr,
    });
    say("ready");
    process.stdout.write(
      [
        "",
        `  Gateway:   ${baseUrl}`,
        `  Console:   ${baseUrl}/console`,
        `  Demo key:  ${DEMO_API_KEY}`,
        "",
        `  curl -s ${baseUrl}/v1/render -H "Authorization: Bearer ${DEMO_API_KEY}" \\`,
        `    -H "Content-Type: application/json" -d '{"html":"<h1>Hello {{name}}</h1>","data":{"name":"Ada"}}'`,
        "",
        `  Webhooks:  npm run webhooks:listen, then "webhook_url": "https://127.0.0.1/webhooks" (delivered to port ${listener.WEBHOOK_DEV_TARGET_PORT})`,
        "",
        "  Health and metrics (/livez, /readyz, /metrics):",
        ...SERVICE_NAMES.map((name) => `    ${name.padEnd(9)} http://localhost:${ports.health[name]}/metrics`),
        "",
        "  Logs: .data/logs/<service>.log   Stop: Ctrl-C",
        "",
      ].join("\n"),
    );
    for (const proc of services.processes.values()) {
      proc.child.once("exit", (code, signal) => {
        if (!stopping) {
          say(`${proc.name} exited (${signal ?? code}); stopping the stack`);
          void stop(1);
        }
      });
    }
  } catch (err) {
    process.stderr.write(`pressroom: ${(err as Error).message}\n`);
    await stop(1);
  }
}

void main();

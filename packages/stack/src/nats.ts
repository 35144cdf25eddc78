import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { DEFAULT_NATS_URL } from "@pressroom/platform";
import { connect } from "nats";
import { canConnect, freePort, waitFor } from "./ports";

/** A NATS user and password. */
export interface NatsCredentials {
  user: string;
  pass: string;
}

/** True when a NATS server with JetStream answers at url (to these credentials, where given). */
export async function jetstreamAnswers(url: string, credentials?: NatsCredentials): Promise<boolean> {
  const { hostname, port } = new URL(url);
  if (!(await canConnect(hostname, Number(port || new URL(DEFAULT_NATS_URL).port)))) return false;
  try {
    const nc = await connect({ servers: url, timeout: 2_000, maxReconnectAttempts: 0, ...credentials });
    try {
      await (await nc.jetstreamManager({ timeout: 2_000 })).getAccountInfo();
      return true;
    } finally {
      await nc.close();
    }
  } catch {
    return false;
  }
}

export interface PrivateNats {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
  /** Stops the server abruptly and starts it again on the same port and store. */
  restart(): Promise<void>;
}

export function natsServerBinary(): string {
  const found = spawnSync("sh", ["-c", "command -v nats-server || ls /usr/sbin/nats-server 2>/dev/null"], { encoding: "utf8" }).stdout.trim().split("\n")[0];
  if (!found) throw new Error("nats-server was not found. Install it with: apt-get install -y nats-server (or set NATS_URL to a JetStream server).");
  return found;
}

/**
 * Starts a private nats-server with JetStream (file storage under storeDir) on
 * a free port. With `config`, that text is its configuration file (e.g. an
 * authorization block); `credentials` are then what its readiness is probed with.
 */
export async function startPrivateNats(
  storeDir: string,
  options: { port?: number; config?: string; credentials?: NatsCredentials } = {},
): Promise<PrivateNats> {
  mkdirSync(storeDir, { recursive: true });
  const binary = natsServerBinary();
  const port = options.port ?? (await freePort());
  const url = `nats://127.0.0.1:${port}`;
  const configArgs: string[] = [];
  if (options.config !== undefined) {
    const file = `${storeDir}.conf`;
    writeFileSync(file, options.config, { mode: 0o600 });
    configArgs.push("-c", file);
  }
  const launch = () => spawn(binary, [...configArgs, "-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDir], { stdio: ["ignore", "ignore", "pipe"] });
  const handle: PrivateNats = {
    url,
    port,
    process: launch(),
    async stop() {
      await stopChild(handle.process, "SIGTERM", 5_000);
    },
    async restart() {
      await stopChild(handle.process, "SIGKILL", 5_000);
      handle.process = launch();
      await waitFor("nats-server restart", () => jetstreamAnswers(url, options.credentials), 15_000);
    },
  };
  await waitFor("private nats-server", () => jetstreamAnswers(url, options.credentials), 15_000);
  return handle;
}

export function stopChild(child: ChildProcess, signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { distinctFreePorts, jetstreamAnswers, natsServerBinary, stopChild, waitFor } from "@pressroom/stack";
import { component, type K8sObject, ofKind, settingsSecret } from "./helm";
import { effectiveEnv, type Workload } from "./workloads";

/** The chart's bundled NATS as rendered: its nats.conf, its container's environment and each user's password from the Secret. */
export interface BundledNats {
  conf: string;
  env: Record<string, string>;
  passwords: Record<string, string>;
}

export function bundledNats(objects: K8sObject[]): BundledNats {
  const config = ofKind<K8sObject & { data: Record<string, string> }>(objects, "ConfigMap").find((c) => component(c) === "nats");
  const server = ofKind<Workload>(objects, "StatefulSet").find((s) => component(s) === "nats");
  const secret = settingsSecret<K8sObject & { stringData?: Record<string, string> }>(objects);
  if (!config || !server || !secret) throw new Error("the render has no bundled NATS (ConfigMap, StatefulSet) or no Secret");
  // POD_NAME comes from the pod's name (a fieldRef): the first replica's.
  const env = { POD_NAME: `${server.metadata.name}-0`, ...effectiveEnv(server.spec.template.spec.containers[0]!, objects) };
  const passwords = Object.fromEntries(
    Object.entries(secret.stringData ?? {}).flatMap(([key, value]) => (key.startsWith("NATS_PASSWORD_") ? [[key.slice(14).toLowerCase(), value]] : [])),
  );
  return { conf: config.data["nats.conf"]!, env, passwords };
}

/** `nats-server -t` on the configuration with the environment: its exit status and output. */
export function checkNatsConf(dir: string, nats: BundledNats): { ok: boolean; output: string } {
  const file = writeConf(dir, nats);
  const result = spawnSync(natsServerBinary(), ["-c", file, "-t"], { env: { PATH: process.env.PATH, ...nats.env }, encoding: "utf8" });
  return { ok: result.status === 0 && !/could not be parsed|error/i.test(result.stderr), output: `${result.stdout}${result.stderr}` };
}

export interface RunningNats {
  url: string;
  /** The monitoring endpoint (http_port): /jsz, /healthz. */
  monitoring: string;
  stop(): Promise<void>;
}

/**
 * Runs a real nats-server with the rendered configuration and environment, on free loopback
 * ports (the command line moves the client and monitoring ports and the store), ready once the
 * provision user's JetStream answers.
 */
export async function runBundledNats(dir: string, nats: BundledNats): Promise<RunningNats> {
  const file = writeConf(dir, nats);
  const [port, monitor] = (await distinctFreePorts(2)) as [number, number];
  const child = spawn(natsServerBinary(), ["-c", file, "-a", "127.0.0.1", "-p", String(port), "-m", String(monitor)], {
    env: { PATH: process.env.PATH, ...nats.env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let output = "";
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const url = `nats://127.0.0.1:${port}`;
  const credentials = nats.passwords.provision === undefined ? undefined : { user: "provision", pass: nats.passwords.provision };
  await waitFor(
    "the chart's nats-server",
    async () => {
      if (child.exitCode !== null) throw new Error(`nats-server exited ${child.exitCode}: ${output}`);
      return jetstreamAnswers(url, credentials);
    },
    15_000,
  );
  return { url, monitoring: `http://127.0.0.1:${monitor}`, stop: () => stopChild(child, "SIGTERM", 5_000) };
}

/** The configuration file, its JetStream store moved under `dir`. */
function writeConf(dir: string, nats: BundledNats): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "nats.conf");
  writeFileSync(file, nats.conf.replace(/store_dir: \S+/, `store_dir: ${JSON.stringify(path.join(dir, "jetstream"))}`), { mode: 0o600 });
  return file;
}

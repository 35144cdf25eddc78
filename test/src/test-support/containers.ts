/**
 * Pressroom's images under testcontainers, over podman's Docker API (deploy/README.md, "The
 * images under test"): podman's socket started when nothing answers, the six service images and
 * the suite's NATS and PostgreSQL built locally (nothing is pulled), and the containers run as the
 * chart runs them: its rendered settings, its Service names as network aliases, uid 10001, a
 * read-only root with a /tmp of its own, every capability dropped, no new privileges.
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT, waitFor } from "@pressroom/stack";
import { GenericContainer, type StartedNetwork, type StartedTestContainer, Wait } from "testcontainers";
import type { K8sObject } from "./helm";

const run = promisify(execFile);
/** A host directory mounted into a container (testcontainers' own type, which its index does not export). */
export type BindMount = Parameters<GenericContainer["withBindMounts"]>[0][number];
const CONTAINERS_CONF = path.join(REPO_ROOT, "deploy", "podman", "containers.conf");
/** Where podman serves the Docker API when the suite starts it (rootful podman's usual socket). */
export const PODMAN_SOCKET = "/run/podman/podman.sock";
export const VERSION = (JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;
/** How long deploy/images.sh may take: a cold build (npm install and a turbo build in the image) has taken over 20 minutes here. */
export const IMAGE_BUILD_TIMEOUT_MS = 40 * 60_000;

/** The suite's own dependency images (test/containers/Containerfile), tagged locally. */
export const DEPENDENCY_IMAGES = { nats: "localhost/pressroom-test/nats:trixie", postgres: "localhost/pressroom-test/postgres:trixie" } as const;

/** podman with the repository's containers.conf, as deploy/images.sh uses it. */
export async function podman(args: string[], timeoutMs = 120_000): Promise<string> {
  const { stdout } = await run("podman", args, {
    env: { ...process.env, CONTAINERS_CONF },
    maxBuffer: 16 * 1024 * 1024,
    timeout: timeoutMs,
  });
  return stdout;
}

function pings(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath: socket, path: "/_ping", timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once("error", () => resolve(false));
    req.once("timeout", () => req.destroy());
    req.end();
  });
}

/**
 * Points testcontainers at podman: DOCKER_HOST when set, else podman's socket, started here
 * (`podman system service --time=0`) when it does not answer. Ryuk is off (it is an image to
 * pull): the suite removes what it starts in its after hook. Returns what stops a service started here.
 */
export async function ensurePodmanSocket(): Promise<() => Promise<void>> {
  process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
  // Published ports are reached on IPv4 (podman's networks here have no IPv6), not on whatever "localhost" resolves to first.
  process.env.TESTCONTAINERS_HOST_OVERRIDE ??= "127.0.0.1";
  if (process.env.DOCKER_HOST) return async () => undefined;
  process.env.DOCKER_HOST = `unix://${PODMAN_SOCKET}`;
  if (await pings(PODMAN_SOCKET)) return async () => undefined;
  mkdirSync(path.dirname(PODMAN_SOCKET), { recursive: true });
  const service = spawn("podman", ["system", "service", "--time=0", `unix://${PODMAN_SOCKET}`], {
    env: { ...process.env, CONTAINERS_CONF },
    stdio: "ignore",
  });
  const failed = new Promise<never>((_, reject) => service.once("error", reject));
  failed.catch(() => undefined);
  await Promise.race([waitFor("podman's Docker API", () => pings(PODMAN_SOCKET), 30_000, 200), failed]);
  return async () => {
    service.kill("SIGTERM");
    if (service.exitCode === null) await once(service, "exit");
  };
}

/**
 * The six service images (deploy/images.sh) and the suite's NATS and PostgreSQL, all built
 * with podman's layer cache: a warm run goes through cached layers only.
 */
export async function buildImages(): Promise<void> {
  await run(path.join(REPO_ROOT, "deploy", "images.sh"), [VERSION], { timeout: IMAGE_BUILD_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 });
  const context = path.join(REPO_ROOT, "test", "containers");
  // Both on the base images.sh made; side by side, as most of a cold build is apt's downloads.
  await Promise.all(
    Object.entries(DEPENDENCY_IMAGES).map(([target, tag]) =>
      podman(["build", "--layers", "--target", target, "--tag", tag, "--file", path.join(context, "Containerfile"), context], 15 * 60_000),
    ),
  );
}

/** An image's size in bytes, as `podman images` counts it (uncompressed). */
export async function imageSize(image: string): Promise<number> {
  return Number((await podman(["image", "inspect", "--format", "{{.Size}}", image])).trim());
}

/** The budgets of deploy/README.md's size table (`| \`pressroom/<service>\` | <size> MB | <budget> MB |`), in bytes. */
export function imageBudgets(): Record<string, number> {
  const readme = readFileSync(path.join(REPO_ROOT, "deploy", "README.md"), "utf8");
  return Object.fromEntries([...readme.matchAll(/^\| `pressroom\/(\w+)` \| \d+ MB \| (\d+) MB \|$/gm)].map((m) => [m[1]!, Number(m[2]) * 1_000_000]));
}

/** What the suite reads of a rendered pod's container. */
export interface PodContainer {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  securityContext?: {
    runAsUser?: number;
    runAsGroup?: number;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: { name: string; mountPath: string }[];
}

export interface PodSpec {
  securityContext?: { runAsUser?: number; runAsGroup?: number };
  containers: PodContainer[];
  initContainers?: PodContainer[];
  volumes?: { name: string; emptyDir?: object; secret?: { secretName: string }; configMap?: { name: string } }[];
}

/** The pod spec of a rendered Deployment or Job. */
export function podSpec(objects: K8sObject[], kind: "Deployment" | "Job", name: string): PodSpec {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`${kind} ${name} is not in the rendered chart`);
  return (found.spec as { template: { spec: PodSpec } }).template.spec;
}

/** A rendered container's environment, as the kubelet would give it: its ConfigMaps, then env (Secret keys and the pod's name resolved). */
export function containerEnv(objects: K8sObject[], container: PodContainer, podName: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) if (source.configMapRef) Object.assign(env, configMapData(objects, source.configMapRef.name));
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (variable.valueFrom?.fieldRef?.fieldPath === "metadata.name") env[variable.name] = podName;
    else if (ref) env[variable.name] = secretValue(objects, ref.name, ref.key);
    else throw new Error(`${container.name}: ${variable.name} has a source the suite does not resolve`);
  }
  return env;
}

function secretValue(objects: K8sObject[], name: string, key: string): string {
  const found = objects.find((o) => o.kind === "Secret" && o.metadata.name === name);
  const value = (found?.stringData as Record<string, string> | undefined)?.[key];
  const data = (found?.data as Record<string, string> | undefined)?.[key];
  if (value !== undefined) return value;
  if (data !== undefined) return Buffer.from(data, "base64").toString("utf8");
  throw new Error(`Secret ${name} has no ${key}`);
}

/**
 * A rendered pod's container as a testcontainer: its image (the local one), command and args
 * (Kubernetes' command is the entrypoint, its args the command), working directory, environment
 * (less the names in `unset`),
 * security context (user, read-only root, dropped capabilities, no privilege escalation), and
 * volumes: an emptyDir is a tmpfs, a Secret's (or a ConfigMap's) volume the host directory `secretDirs` names for it;
 * `binds` adds host directories.
 */
export function podContainer(
  objects: K8sObject[],
  spec: PodSpec,
  container: PodContainer,
  options: { podName: string; secretDirs: Record<string, string>; unset?: string[]; binds?: BindMount[] },
): PodContainerImage {
  const security = { ...spec.securityContext, ...container.securityContext };
  const image = new PodContainerImage(container.image.split("/").length === 2 ? `localhost/${container.image}` : container.image)
    .withName(options.podName)
    .withEnvironment(Object.fromEntries(Object.entries(containerEnv(objects, container, options.podName)).filter(([name]) => !options.unset?.includes(name))))
    .withUser(`${security.runAsUser}:${security.runAsGroup}`)
    .withDroppedCapabilities(...(container.securityContext?.capabilities?.drop ?? []));
  if (container.command) image.withEntrypoint(container.command);
  if (container.args) image.withCommand(container.args);
  if (container.workingDir) image.withWorkingDir(container.workingDir);
  const tmpfs: Record<string, string> = {};
  const binds: BindMount[] = [...(options.binds ?? [])];
  for (const mount of container.volumeMounts ?? []) {
    const volume = spec.volumes?.find((v) => v.name === mount.name);
    const source = volume?.secret?.secretName ?? volume?.configMap?.name;
    if (volume?.emptyDir) tmpfs[mount.mountPath] = "rw,size=256m";
    else if (source && options.secretDirs[source]) binds.push({ source: options.secretDirs[source], target: mount.mountPath, mode: "ro" });
    else throw new Error(`${container.name}: volume ${mount.name} is neither an emptyDir nor a Secret or ConfigMap the suite has`);
  }
  return image
    .withTmpFs(tmpfs)
    .withBindMounts(binds)
    .withRootFilesystem(security.readOnlyRootFilesystem === true ? "read-only" : "writable")
    .withNoNewPrivileges(security.allowPrivilegeEscalation === false);
}

/** A GenericContainer with the two settings of a security context testcontainers has no method for. */
export class PodContainerImage extends GenericContainer {
  withRootFilesystem(mode: "read-only" | "writable"): this {
    this.hostConfig.ReadonlyRootfs = mode === "read-only";
    return this;
  }

  withNoNewPrivileges(on: boolean): this {
    this.hostConfig.SecurityOpt = on ? ["no-new-privileges"] : [];
    return this;
  }
}

/** One gRPC peer's certificate files (ensureGrpcCertificates) in a directory of their own, readable by uid 10001, as its Secret volume holds them. */
export function grpcSecretDir(dir: string, files: { ca: string; cert: string; key: string }): string {
  mkdirSync(dir, { recursive: true });
  for (const [from, to] of [
    [files.ca, "ca.crt"],
    [files.cert, "tls.crt"],
    [files.key, "tls.key"],
  ] as const) {
    copyFileSync(from, path.join(dir, to));
    chmodSync(path.join(dir, to), 0o644);
  }
  return dir;
}

/**
 * The files of a rendered Secret or ConfigMap, the `keys` of it a volume mounts, in a directory of
 * their own readable by uid 10001, as its volume holds them.
 */
export function renderedVolumeDir(
  dir: string,
  object: K8sObject & { data?: Record<string, string>; stringData?: Record<string, string> },
  keys: string[],
): string {
  mkdirSync(dir, { recursive: true });
  for (const key of keys) {
    const text = object.stringData?.[key] ?? object.data?.[key];
    if (text === undefined) throw new Error(`${object.kind} ${object.metadata.name} has no ${key}`);
    writeFileSync(path.join(dir, key), text, { mode: 0o644 });
  }
  return dir;
}

/** A rendered ConfigMap's settings. */
export function configMapData(objects: K8sObject[], name: string): Record<string, string> {
  const found = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === name);
  if (!found) throw new Error(`ConfigMap ${name} is not in the rendered chart`);
  return found.data as Record<string, string>;
}

/** Starts a one-off container and waits for it to exit 0 (testcontainers fails the start otherwise); returns its output. */
export async function runToCompletion(container: GenericContainer, timeoutMs = 300_000): Promise<string> {
  let output = "";
  const started = await container
    .withWaitStrategy(Wait.forOneShotStartup())
    .withStartupTimeout(timeoutMs)
    .withLogConsumer((stream) => stream.on("data", (chunk: Buffer | string) => (output += chunk.toString())))
    .start()
    .catch((err: Error) => {
      throw new Error(`${err.message}\n${output}`);
    });
  await started.stop();
  return output;
}

/**
 * A network's containers, stopped and removed last started first (a sidecar before the
 * container whose network it shares), then the network: the suite's after hook, Ryuk being off.
 */
export async function removeAll(containers: Iterable<StartedTestContainer>, network?: StartedNetwork): Promise<void> {
  for (const container of [...containers].reverse()) await container.stop({ timeout: 5_000 }).catch(() => undefined);
  await network?.stop().catch(() => undefined);
}

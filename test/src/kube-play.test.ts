import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { K8sObject } from "./test-support/helm";
import { playablePodSpec, type PodSpec } from "./test-support/kube-play";

const labels = (component: string) => ({ "app.kubernetes.io/name": "pressroom", "app.kubernetes.io/component": component });
const service = (component: string, ports: { port: number; targetPort?: number | string }[]): K8sObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: `pressroom-${component}` },
  spec: { selector: labels(component), ports },
});

const objects: K8sObject[] = [
  service("identity", [{ port: 7000 }, { port: 9090, targetPort: "health" }]),
  service("gateway", [{ port: 80, targetPort: 8080 }, { port: 9090 }]),
  {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "pressroom-gateway" },
    data: { IDENTITY_ADDR: "pressroom-identity.smoke.svc.cluster.local:7000", HEALTH_PORT: "9090", LOG_LEVEL: "info", SYNC_WAIT_MS: "1000" },
  },
  { apiVersion: "v1", kind: "Secret", metadata: { name: "pressroom" }, data: { DATABASE_URL: "cG9zdGdyZXM6Ly8=" } },
];

const ports = { identity: { health: 20001, grpc: 20002 }, gateway: { health: 20003, grpc: 20004, http: 20005 } };

function gatewaySpec(): PodSpec {
  return {
    containers: [
      {
        name: "gateway",
        envFrom: [{ configMapRef: { name: "pressroom-gateway" } }, { secretRef: { name: "pressroom" } }],
        env: [
          { name: "LOG_LEVEL", value: "debug" },
          { name: "PUBLIC_BASE_URL", value: "http://pressroom-gateway:80" },
        ],
        ports: [{ containerPort: 8080 }],
        livenessProbe: { httpGet: { path: "/livez", port: 9090 } },
        readinessProbe: { httpGet: { path: "/readyz", port: 9090 } },
        volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
      },
    ],
    volumes: [{ name: "tmp", emptyDir: {} }],
  };
}

describe("the rendered pod spec made playable on one host", () => {
  const template = { metadata: { labels: labels("gateway") }, spec: gatewaySpec() };
  const spec = playablePodSpec(template, objects, "smoke", { ports, hostFiles: [{ component: "gateway", hostPath: "/tmp/ca.pem", mountPath: "/etc/ca.pem" }] });
  const env = Object.fromEntries(spec.containers[0]!.env!.map((v) => [v.name, v.value ?? v.valueFrom]));

  it("runs on the host's network with the component's own ports", () => {
    assert.equal(spec.hostNetwork, true);
    assert.deepEqual([env.HEALTH_PORT, env.GRPC_PORT, env.HTTP_PORT], ["20003", "20004", "20005"]);
  });

  it("maps every Service name and port, by target port, onto 127.0.0.1 and the component's port", () => {
    assert.equal(env.IDENTITY_ADDR, "127.0.0.1:20002");
    assert.equal(env.PUBLIC_BASE_URL, "http://127.0.0.1:20005");
  });

  it("resolves envFrom with Kubernetes' precedence: env over the ConfigMap, Secret keys as secretKeyRefs", () => {
    assert.equal(env.LOG_LEVEL, "debug");
    assert.equal(env.SYNC_WAIT_MS, "1000");
    assert.deepEqual(env.DATABASE_URL, { secretKeyRef: { name: "pressroom", key: "DATABASE_URL" } });
    assert.equal(spec.containers[0]!.envFrom, undefined);
  });

  it("drops probes and container ports, mounts the host files, and leaves the rendered objects as they were", () => {
    const container = spec.containers[0]!;
    assert.deepEqual([container.livenessProbe, container.readinessProbe, container.ports], [undefined, undefined, undefined]);
    assert.deepEqual(
      container.volumeMounts?.map((m) => m.mountPath),
      ["/tmp", "/etc/ca.pem"],
    );
    assert.deepEqual(spec.volumes?.at(-1), { name: "smoke-file-0", hostPath: { path: "/tmp/ca.pem", type: "File" } });
    assert.deepEqual(template.spec, gatewaySpec());
  });

  it("plays a pre-made Secret's volume from the host directory named for it, and leaves other Secret volumes alone", () => {
    const withSecrets = {
      metadata: { labels: labels("gateway") },
      spec: {
        containers: [{ name: "gateway" }],
        volumes: [
          { name: "grpc-tls", secret: { secretName: "tls-gateway" } },
          { name: "other", secret: { secretName: "rendered" } },
        ],
      },
    };
    const played = playablePodSpec(withSecrets, objects, "smoke", { ports, secretDirs: { "tls-gateway": "/tmp/smoke/gateway" } });
    assert.deepEqual(played.volumes, [
      { name: "grpc-tls", hostPath: { path: "/tmp/smoke/gateway", type: "Directory" } },
      { name: "other", secret: { secretName: "rendered" } },
    ]);
  });

  it("fails on a ConfigMap the chart did not render", () => {
    const missing = { metadata: { labels: labels("gateway") }, spec: { containers: [{ name: "x", envFrom: [{ configMapRef: { name: "nope" } }] }] } };
    assert.throws(() => playablePodSpec(missing, objects, "smoke", { ports }), /ConfigMap nope is not in the rendered chart/);
  });
});

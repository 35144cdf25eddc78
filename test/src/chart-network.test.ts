import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { before, describe, it } from "node:test";
import { type K8sObject, NAMESPACE, ofKind, PRODUCTION_VALUES, render, renderError } from "./test-support/helm";
import { type Endpoint, NetworkPolicies, podEndpoints } from "./test-support/network-policy";
import { GRPC_PORT, HEALTH_PORT, HTTP_PORT, MIGRATED, SERVICES } from "./test-support/workloads";

/**
 * The NetworkPolicies of the default install (bundled NATS and Postgres),
 * and of the production example (external NATS and Postgres, the cluster's
 * service range excluded from public egress), evaluated as a whole: who may
 * open a connection to whom, on which port, against issue 12's allow-lists.
 */

const POSTGRES_PORT = 5432;
const NATS_PORT = 4222;
const PUBLIC = "93.184.216.34";
const METADATA = "169.254.169.254";
const PRIVATE = "10.0.0.1";
const OUTSIDE: Endpoint = { ip: "203.0.113.7" };
const KUBE_DNS: Endpoint = {
  ip: "10.244.200.10",
  namespace: "kube-system",
  labels: { "k8s-app": "kube-dns" },
  ports: [{ name: "dns", containerPort: 53, protocol: "UDP" }],
};
const ip = (address: string): Endpoint => ({ ip: address });
const OTHER_APP: Endpoint = { ip: "10.244.201.3", namespace: "shop", labels: { app: "shop" } };

describe("the NetworkPolicies", () => {
  let policies: NetworkPolicies;
  const pods = new Map<string, Endpoint>();
  const pod = (name: string): Endpoint => {
    const found = pods.get(name);
    if (!found) throw new Error(`no pod with app.kubernetes.io/component=${name}; rendered: ${[...pods.keys()].join(", ")}`);
    return found;
  };
  const may = (from: Endpoint, to: Endpoint, port: number, protocol = "TCP") => policies.allows(from, to, port, protocol);

  before(() => {
    // The evaluation install (the local provider's free upgrades accepted, as the chart requires).
    const objects: K8sObject[] = render({ set: ["networkPolicy.enabled=true", "billing.local.allowFreeUpgrades=true"] });
    policies = new NetworkPolicies(objects, NAMESPACE, { "kube-system": {}, shop: {} });
    for (const [name, endpoint] of podEndpoints(objects, NAMESPACE)) pods.set(name, endpoint);
  });

  it("deny by default: a pod of another namespace reaches no Pressroom port but the gateway's HTTP, nor Postgres or NATS", () => {
    assert.equal(may(OTHER_APP, pod("gateway"), HTTP_PORT), true, "shop → gateway HTTP (an ingress controller is such a pod)");
    for (const target of [...SERVICES, "postgresql", "nats"]) {
      for (const port of [GRPC_PORT, HEALTH_PORT, HTTP_PORT, POSTGRES_PORT, NATS_PORT].filter((p) => !(target === "gateway" && p === HTTP_PORT))) {
        assert.equal(may(OTHER_APP, pod(target), port), false, `shop → ${target}:${port}`);
      }
    }
  });

  it("only the gateway takes traffic from outside, on its HTTP port only", () => {
    assert.equal(may(OUTSIDE, pod("gateway"), HTTP_PORT), true, "outside → gateway HTTP");
    assert.equal(may(OUTSIDE, pod("gateway"), GRPC_PORT), false, "outside → gateway 7000");
    assert.equal(may(OUTSIDE, pod("gateway"), HEALTH_PORT), false, "outside → gateway health");
    for (const service of SERVICES.filter((s) => s !== "gateway")) {
      for (const port of [GRPC_PORT, HEALTH_PORT, HTTP_PORT]) assert.equal(may(OUTSIDE, pod(service), port), false, `outside → ${service}:${port}`);
    }
  });

  it("the gateway reaches identity, metering, render, storage and webhook over gRPC", () => {
    for (const target of ["identity", "metering", "render", "storage", "webhook"]) {
      assert.equal(may(pod("gateway"), pod(target), GRPC_PORT), true, `gateway → ${target}`);
    }
  });

  it("identity is reached by the gateway and by its gRPC clients metering and webhook only", () => {
    for (const source of ["gateway", "metering", "webhook"]) assert.equal(may(pod(source), pod("identity"), GRPC_PORT), true, `${source} → identity`);
    for (const source of ["render", "storage"]) assert.equal(may(pod(source), pod("identity"), GRPC_PORT), false, `${source} → identity`);
  });

  it("metering, render and webhook gRPC are the gateway's alone", () => {
    for (const target of ["metering", "render", "webhook"]) {
      for (const source of SERVICES.filter((s) => s !== "gateway" && s !== target)) {
        assert.equal(may(pod(source), pod(target), GRPC_PORT), false, `${source} → ${target}`);
      }
    }
  });

  it("the admin pod (the operator CLI) reaches identity's and metering's gRPC and nothing else; nothing reaches it", () => {
    for (const target of ["identity", "metering"]) assert.equal(may(pod("admin"), pod(target), GRPC_PORT), true, `admin → ${target}`);
    for (const target of ["render", "storage", "gateway", "webhook"]) {
      for (const port of [GRPC_PORT, HEALTH_PORT, HTTP_PORT]) assert.equal(may(pod("admin"), pod(target), port), false, `admin → ${target}:${port}`);
    }
    assert.equal(may(pod("admin"), pod("postgresql"), POSTGRES_PORT), false, "admin → postgres");
    assert.equal(may(pod("admin"), pod("nats"), NATS_PORT), false, "admin → nats");
    assert.equal(may(pod("admin"), ip(PUBLIC), 443), false, "admin → public 443");
    for (const source of SERVICES) assert.equal(may(pod(source), pod("admin"), GRPC_PORT), false, `${source} → admin`);
  });

  it("storage is reached by the gateway, render and webhook only", () => {
    assert.equal(may(pod("render"), pod("storage"), GRPC_PORT), true, "render → storage");
    for (const source of ["identity", "metering"]) assert.equal(may(pod(source), pod("storage"), GRPC_PORT), false, `${source} → storage`);
  });

  it("render's egress is public addresses only (no cluster, private or metadata ranges) besides NATS and storage", () => {
    assert.equal(may(pod("render"), ip(PUBLIC), 443), true, "render → public 443");
    for (const address of [METADATA, PRIVATE, "172.16.0.1", "192.168.1.1"]) {
      for (const port of [80, 443]) assert.equal(may(pod("render"), ip(address), port), false, `render → ${address}:${port}`);
    }
    for (const target of ["gateway", "metering", "webhook"]) {
      for (const port of [GRPC_PORT, HEALTH_PORT, HTTP_PORT]) assert.equal(may(pod("render"), pod(target), port), false, `render → ${target}:${port}`);
    }
  });

  it("render reaches public addresses on the ports its fetcher allows only (render.subresourcePorts: 80 and 443 by default)", () => {
    const renderConfig = (objects: K8sObject[]) =>
      ofKind<K8sObject & { data: Record<string, string> }>(objects, "ConfigMap").find((c) => c.metadata.name.endsWith("-render"))?.data ?? {};
    assert.equal(renderConfig(render({ set: ["networkPolicy.enabled=true", "billing.local.allowFreeUpgrades=true"] })).RENDER_SUBRESOURCE_PORTS, "80,443");
    for (const port of [80, 443]) assert.equal(may(pod("render"), ip(PUBLIC), port), true, `render → public ${port}`);
    for (const port of [25, 6379, 8080, 8443]) assert.equal(may(pod("render"), ip(PUBLIC), port), false, `render → public ${port}`);

    const objects = render({ set: ["networkPolicy.enabled=true", "billing.local.allowFreeUpgrades=true", "render.subresourcePorts={80,443,8443}"] });
    assert.equal(renderConfig(objects).RENDER_SUBRESOURCE_PORTS, "80,443,8443");
    const wider = new NetworkPolicies(objects, NAMESPACE, { "kube-system": {}, shop: {} });
    assert.equal(wider.allows(pod("render"), ip(PUBLIC), 8443, "TCP"), true, "render → public 8443 once allowed");
    assert.equal(wider.allows(pod("render"), ip(PUBLIC), 25, "TCP"), false, "render → public 25");
    assert.equal(wider.allows(pod("webhook"), ip(PUBLIC), 8443, "TCP"), false, "webhook → public 8443");
    assert.match(renderError({ set: ["billing.local.allowFreeUpgrades=true", "render.env.RENDER_SUBRESOURCE_PORTS=25\\,443"] }), /set render.subresourcePorts/);
    const dir = mkdtempSync(path.join(tmpdir(), "pressroom-chart-"));
    try {
      for (const value of ["true", "false"]) {
        const file = path.join(dir, `loopback-${value}.yaml`);
        writeFileSync(file, `render:\n  env:\n    RENDER_ALLOW_LOOPBACK: "${value}"\n`);
        assert.match(
          renderError({ valuesFiles: [file], set: ["billing.local.allowFreeUpgrades=true"] }),
          /RENDER_ALLOW_LOOPBACK is for development and tests only/,
          "documents and url sources never reach the pod's loopback",
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("webhook's egress is public 443 plus NATS (and identity for the signing secret, storage for a destination's output)", () => {
    assert.equal(may(pod("webhook"), ip(PUBLIC), 443), true, "webhook → public 443");
    assert.equal(may(pod("webhook"), ip(PUBLIC), 80), false, "webhook → public 80");
    for (const address of [PRIVATE, METADATA, "172.16.0.1", "192.168.1.1"])
      assert.equal(may(pod("webhook"), ip(address), 443), false, `webhook → ${address}:443`);
    assert.equal(may(pod("webhook"), pod("storage"), GRPC_PORT), true, "webhook → storage");
    for (const target of ["gateway", "metering", "render"]) {
      assert.equal(may(pod("webhook"), pod(target), GRPC_PORT), false, `webhook → ${target}`);
    }
  });

  it("metering reaches Stripe's API (public 443) only with billing.provider=stripe", () => {
    assert.equal(may(pod("metering"), ip(PUBLIC), 443), false, "local billing: metering → public 443");
    const objects = render({ set: ["billing.provider=stripe", "secrets.stripeSecretKey=sk_test_np", "secrets.stripeWebhookSecret=whsec_np"] });
    const stripe = new NetworkPolicies(objects, NAMESPACE, { "kube-system": {}, shop: {} });
    assert.equal(stripe.allows(pod("metering"), ip(PUBLIC), 443, "TCP"), true, "stripe billing: metering → public 443");
    assert.equal(stripe.allows(pod("metering"), ip(PUBLIC), 80, "TCP"), false, "stripe billing: metering → public 80");
    assert.equal(stripe.allows(pod("metering"), ip(METADATA), 443, "TCP"), false, "stripe billing: metering → metadata");
  });

  it("the other services reach nothing outside the cluster", () => {
    for (const service of ["gateway", "identity", "storage"]) {
      for (const address of [PUBLIC, METADATA]) assert.equal(may(pod(service), ip(address), 443), false, `${service} → ${address}:443`);
    }
  });

  it("the database services and the setup Job reach Postgres on 5432 only", () => {
    const sources = [...MIGRATED, ...[...pods.keys()].filter((name) => name === "provision")];
    assert.ok(sources.includes("provision"), "no workload with component provision");
    for (const source of sources) {
      assert.equal(may(pod(source), pod("postgresql"), POSTGRES_PORT), true, `${source} → postgresql:5432`);
      for (const port of [NATS_PORT, 22, 8008, 9187]) assert.equal(may(pod(source), pod("postgresql"), port), false, `${source} → postgresql:${port}`);
    }
  });

  it("every service and the setup Job reach NATS on 4222 only", () => {
    for (const source of [...SERVICES, "provision"]) {
      assert.equal(may(pod(source), pod("nats"), NATS_PORT), true, `${source} → nats:4222`);
      for (const port of [6222, 7422, POSTGRES_PORT]) assert.equal(may(pod(source), pod("nats"), port), false, `${source} → nats:${port}`);
    }
  });

  it("every service and the setup Job may resolve names with the cluster DNS", () => {
    for (const source of [...SERVICES, "provision"]) assert.equal(may(pod(source), KUBE_DNS, 53, "UDP"), true, `${source} → kube-dns:53/udp`);
  });
});

describe("the NetworkPolicies of the production example values", () => {
  let policies: NetworkPolicies;
  const pods = new Map<string, Endpoint>();
  /** The external NATS and Postgres, in namespaces of their own; an address in the cluster's service range. */
  const NATS: Endpoint = { ip: "10.244.210.4", namespace: "nats", labels: { app: "nats" }, ports: [{ containerPort: NATS_PORT, protocol: "TCP" }] };
  const POSTGRES: Endpoint = { ip: "10.244.211.4", namespace: "db", labels: { app: "postgres" }, ports: [{ containerPort: POSTGRES_PORT, protocol: "TCP" }] };
  const CLUSTER_SERVICE = "10.96.0.10";
  const pod = (name: string): Endpoint => pods.get(name) ?? assert.fail(`no pod with app.kubernetes.io/component=${name}`);
  const may = (from: Endpoint, to: Endpoint, port: number) => policies.allows(from, to, port, "TCP");

  before(() => {
    const objects: K8sObject[] = render({ valuesFiles: [PRODUCTION_VALUES] });
    policies = new NetworkPolicies(objects, NAMESPACE, { "kube-system": {}, shop: {}, nats: {}, db: {}, "ingress-nginx": {} });
    for (const [name, endpoint] of podEndpoints(objects, NAMESPACE)) pods.set(name, endpoint);
  });

  it("bundles no NATS or Postgres, and a pod of another namespace reaches none of their ports", () => {
    assert.ok(!pods.has("nats") && !pods.has("postgresql"), [...pods.keys()].join(", "));
    for (const target of SERVICES) {
      for (const port of [GRPC_PORT, HEALTH_PORT]) assert.equal(may(OTHER_APP, pod(target), port), false, `shop → ${target}:${port}`);
    }
  });

  it("behind the Ingress, the gateway's HTTP port admits the ingress controller's pods alone (no other pod can pose as a trusted proxy)", () => {
    const controllerLabels = { "app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller" };
    const controller: Endpoint = { ip: "10.244.50.7", namespace: "ingress-nginx", labels: controllerLabels };
    assert.equal(may(controller, pod("gateway"), HTTP_PORT), true, "ingress controller → gateway HTTP");
    const impostors: [string, Endpoint][] = [
      ["a pod of another namespace", OTHER_APP],
      ["another pod of the controller's namespace", { ip: "10.244.50.8", namespace: "ingress-nginx", labels: { "app.kubernetes.io/name": "ingress-nginx" } }],
      ["a pod with the controller's labels in another namespace", { ip: "10.244.51.9", namespace: "shop", labels: controllerLabels }],
      ["Pressroom's own render pod", pod("render")],
      ["an address outside the cluster", OUTSIDE],
    ];
    for (const [name, from] of impostors) assert.equal(may(from, pod("gateway"), HTTP_PORT), false, name);
  });

  it("every service and the setup Job reach the external NATS; the database services and the Job the external Postgres; the gateway no database", () => {
    for (const source of [...SERVICES, "provision"]) assert.equal(may(pod(source), NATS, NATS_PORT), true, `${source} → external nats:4222`);
    for (const source of [...MIGRATED, "provision"]) assert.equal(may(pod(source), POSTGRES, POSTGRES_PORT), true, `${source} → external postgres:5432`);
    assert.equal(may(pod("gateway"), POSTGRES, POSTGRES_PORT), false, "gateway → postgres");
  });

  it("render and webhook reach public addresses, never the cluster's services, private ranges or the metadata address", () => {
    assert.equal(may(pod("render"), ip(PUBLIC), 443), true, "render → public 443");
    assert.equal(may(pod("webhook"), ip(PUBLIC), 443), true, "webhook → public 443");
    assert.equal(may(pod("webhook"), ip(PUBLIC), 80), false, "webhook → public 80");
    for (const source of ["render", "webhook"]) {
      for (const address of [CLUSTER_SERVICE, METADATA, PRIVATE, "172.16.0.1", "192.168.1.1"]) {
        assert.equal(may(pod(source), ip(address), 443), false, `${source} → ${address}:443`);
      }
    }
    // The production example bills with Stripe: metering reaches its API (public 443), nothing else outside.
    assert.equal(may(pod("metering"), ip(PUBLIC), 443), true, "metering → Stripe's API");
    assert.equal(may(pod("metering"), ip(CLUSTER_SERVICE), 443), false, "metering → cluster service range");
    for (const service of ["gateway", "identity", "storage"]) assert.equal(may(pod(service), ip(PUBLIC), 443), false, `${service} → public 443`);
  });
});

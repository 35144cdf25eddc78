import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { stringify } from "yaml";
import { evaluation, FREE_UPGRADES } from "./test-support/chart-renders";
import { type K8sObject, NAMESPACE, renderError } from "./test-support/helm";
import { type Endpoint, NetworkPolicies, podEndpoints } from "./test-support/network-policy";
import { HTTP_PORT, SERVICES } from "./test-support/workloads";

/**
 * The NetworkPolicies on clusters that differ from the default (issue 45): DNS served by
 * NodeLocal DNSCache or by OpenShift's dns-default on 5353, an ingress controller on the host
 * network or a load balancer that targets pods, and telemetry to a named collector only.
 */

const NAMESPACES = { "kube-system": {}, "openshift-dns": {}, observability: {}, shop: {}, "ingress-nginx": {} };
const KUBE_DNS: Endpoint = { ip: "10.244.200.10", namespace: "kube-system", labels: { "k8s-app": "kube-dns" } };
const NODE_LOCAL_DNS: Endpoint = { ip: "169.254.20.10" };
const METADATA: Endpoint = { ip: "169.254.169.254" };
const OPENSHIFT_DNS: Endpoint = { ip: "10.128.0.5", namespace: "openshift-dns", labels: { "dns.operator.openshift.io/daemonset-dns": "default" } };
const COLLECTOR: Endpoint = { ip: "10.244.220.7", namespace: "observability", labels: { "app.kubernetes.io/name": "opentelemetry-collector" } };
const OTHER_POD: Endpoint = { ip: "10.244.201.3", namespace: "shop", labels: { app: "shop" } };
const NODE: Endpoint = { ip: "10.0.3.17" };

describe("NetworkPolicies on clusters that differ from the default (issue 45)", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-chart-clusters-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The evaluation install with these values (a file, so that lists and labels keep their types), and its pods. */
  const install = (values: Record<string, unknown>, name: string) => {
    const file = path.join(dir, `${name}.yaml`);
    writeFileSync(file, stringify(values));
    const objects: K8sObject[] = evaluation({ valuesFiles: [file] });
    const pods = podEndpoints(objects, NAMESPACE);
    const policies = new NetworkPolicies(objects, NAMESPACE, NAMESPACES);
    return {
      pods,
      may: (from: Endpoint | string, to: Endpoint | string, port: number, protocol = "TCP") => policies.allows(pod(pods, from), pod(pods, to), port, protocol),
    };
  };
  const pod = (pods: Map<string, Endpoint>, which: Endpoint | string): Endpoint =>
    typeof which === "string" ? (pods.get(which) ?? assert.fail(`no ${which} pod`)) : which;

  it("DNS: kube-dns by default; with NodeLocal DNSCache named, its 169.254.20.10 too, and no other link-local address", () => {
    const plain = install({}, "dns-default");
    for (const source of [...SERVICES, "provision"]) {
      assert.equal(plain.may(source, KUBE_DNS, 53, "UDP"), true, `${source} → kube-dns`);
      assert.equal(plain.may(source, NODE_LOCAL_DNS, 53, "UDP"), false, `${source} → 169.254.20.10 unless named`);
    }
    const peers = [
      { ipBlock: { cidr: "169.254.20.10/32" } },
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } },
    ];
    const local = install({ networkPolicy: { dns: { peers, ports: [53] } } }, "dns-nodelocal");
    for (const source of [...SERVICES, "provision"]) {
      for (const protocol of ["UDP", "TCP"]) assert.equal(local.may(source, NODE_LOCAL_DNS, 53, protocol), true, `${source} → NodeLocal DNSCache ${protocol}`);
      assert.equal(local.may(source, KUBE_DNS, 53, "UDP"), true, `${source} → kube-dns behind it`);
      assert.equal(local.may(source, METADATA, 80), false, `${source} → the metadata address`);
      assert.equal(local.may(source, NODE_LOCAL_DNS, 8080), false, `${source} → 169.254.20.10 beyond DNS`);
    }
  });

  it("DNS on OpenShift: the dns-default pods of openshift-dns, on 5353", () => {
    const peers = [
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "openshift-dns" } },
        podSelector: { matchLabels: { "dns.operator.openshift.io/daemonset-dns": "default" } },
      },
    ];
    const openshift = install({ networkPolicy: { dns: { peers, ports: [5353] } } }, "dns-openshift");
    for (const source of [...SERVICES, "provision"]) {
      assert.equal(openshift.may(source, OPENSHIFT_DNS, 5353, "UDP"), true, `${source} → dns-default:5353/udp`);
      assert.equal(openshift.may(source, OPENSHIFT_DNS, 5353, "TCP"), true, `${source} → dns-default:5353/tcp`);
      assert.equal(openshift.may(source, KUBE_DNS, 53, "UDP"), false, `${source} → kube-dns, not named`);
    }
  });

  it("behind an ingress controller on the host network, the gateway takes HTTP from the nodes' CIDR besides the controller's pods, and nothing else", () => {
    const controller: Endpoint = {
      ip: "10.244.50.7",
      namespace: "ingress-nginx",
      labels: { "app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller" },
    };
    const host = install(
      { gateway: { ingress: { enabled: true } }, networkPolicy: { gatewayClients: [{ ipBlock: { cidr: "10.0.0.0/16" } }] } },
      "host-network",
    );
    assert.equal(host.may(NODE, "gateway", HTTP_PORT), true, "a node → gateway HTTP");
    assert.equal(host.may(controller, "gateway", HTTP_PORT), true, "the controller's pods → gateway HTTP");
    assert.equal(host.may(OTHER_POD, "gateway", HTTP_PORT), false, "another pod → gateway HTTP");
    assert.equal(host.may({ ip: "203.0.113.9" }, "gateway", HTTP_PORT), false, "outside → gateway HTTP");
  });

  it("without an Ingress, gatewayClients alone reach the gateway (a load balancer that targets pods), and with none, any source", () => {
    const balanced = install({ networkPolicy: { gatewayClients: [{ ipBlock: { cidr: "10.0.128.0/20" } }] } }, "pod-targeting-lb");
    assert.equal(balanced.may({ ip: "10.0.130.4" }, "gateway", HTTP_PORT), true, "the load balancer's subnet → gateway HTTP");
    assert.equal(balanced.may(OTHER_POD, "gateway", HTTP_PORT), false, "another pod → gateway HTTP");
    assert.equal(install({}, "open").may(OTHER_POD, "gateway", HTTP_PORT), true, "no Ingress and no clients named: any source");
  });

  it("telemetry goes to the named collector only, on the endpoint's port: no pod of the release, the render pod's Chromium included, reaches another on 4317 or 4318", () => {
    const otel = install(
      {
        otel: {
          endpoint: "http://otel-collector.observability:4318",
          collector: { namespace: "observability", podLabels: { "app.kubernetes.io/name": "opentelemetry-collector" } },
        },
      },
      "otel-pods",
    );
    for (const source of SERVICES) {
      assert.equal(otel.may(source, COLLECTOR, 4318), true, `${source} → collector:4318`);
      assert.equal(otel.may(source, COLLECTOR, 4317), false, `${source} → collector:4317, not the endpoint's port`);
      for (const port of [4317, 4318]) assert.equal(otel.may(source, OTHER_POD, port), false, `${source} → another pod:${port}`);
      assert.equal(otel.may(source, { ...COLLECTOR, namespace: "shop" }, 4318), false, `${source} → the same labels in another namespace`);
    }
    assert.equal(otel.may("provision", COLLECTOR, 4318), false, "the provision Job exports nothing");
    const byAddress = install({ otel: { endpoint: "https://otlp.internal.example", collector: { cidrs: ["10.30.0.0/24"] } } }, "otel-cidr");
    assert.equal(byAddress.may("render", { ip: "10.30.0.9" }, 443), true, "render → the collector's address on https's port");
    assert.equal(byAddress.may("render", COLLECTOR, 443), false, "render → a pod outside the collector's addresses");
  });

  it("an OTLP endpoint without its collector named is refused, naming the values", () => {
    assert.match(
      renderError({ set: [FREE_UPGRADES, "otel.endpoint=http://otel-collector.observability:4318"] }),
      /otel\.collector\.podLabels.*otel\.collector\.cidrs/,
    );
  });
});

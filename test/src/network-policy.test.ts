import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseManifests } from "./test-support/helm";
import { type Endpoint, inCidr, matchesSelector, NetworkPolicies } from "./test-support/network-policy";

/** The evaluator the chart's NetworkPolicy tests stand on, against hand-written policies. */

const policies = new NetworkPolicies(
  parseManifests(`
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: deny-all }
spec: { podSelector: {}, policyTypes: [Ingress, Egress] }
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: api }
spec:
  podSelector: { matchLabels: { role: api } }
  policyTypes: [Ingress, Egress]
  ingress:
    - ports: [{ port: http }]
  egress:
    - to: [{ podSelector: { matchLabels: { role: db } } }]
      ports: [{ port: 5432 }]
    - to: [{ namespaceSelector: { matchLabels: { team: dns } }, podSelector: { matchExpressions: [{ key: k8s-app, operator: In, values: [kube-dns] }] } }]
      ports: [{ port: 53, protocol: UDP }]
    - to: [{ ipBlock: { cidr: 0.0.0.0/0, except: [10.0.0.0/8, 169.254.0.0/16] } }]
      ports: [{ port: 443 }, { port: 8000, endPort: 8010 }]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: db }
spec:
  podSelector: { matchLabels: { role: db } }
  ingress:
    - from: [{ podSelector: { matchLabels: { role: api } } }]
      ports: [{ port: 5432 }]
`),
  "app",
  { infra: { team: "dns" } },
);

const api: Endpoint = { ip: "10.1.0.1", namespace: "app", labels: { role: "api" }, ports: [{ name: "http", containerPort: 8080 }] };
const db: Endpoint = { ip: "10.1.0.2", namespace: "app", labels: { role: "db" }, ports: [{ name: "pg", containerPort: 5432 }] };
const worker: Endpoint = { ip: "10.1.0.3", namespace: "app", labels: { role: "worker" } };
const dns: Endpoint = { ip: "10.2.0.1", namespace: "infra", labels: { "k8s-app": "kube-dns" } };
const stranger: Endpoint = { ip: "10.3.0.1", namespace: "other", labels: { role: "api" } };
const internet: Endpoint = { ip: "93.184.216.34" };

describe("the NetworkPolicy evaluator", () => {
  it("matches CIDRs and label selectors", () => {
    assert.equal(inCidr("10.20.30.40", "10.0.0.0/8"), true);
    assert.equal(inCidr("11.0.0.1", "10.0.0.0/8"), false);
    assert.equal(inCidr("1.2.3.4", "0.0.0.0/0"), true);
    assert.equal(inCidr("192.168.1.1", "192.168.1.1/32"), true);
    assert.equal(inCidr("1.2.3.4", "::/0"), false);
    assert.equal(matchesSelector({ matchLabels: { a: "1" }, matchExpressions: [{ key: "b", operator: "DoesNotExist" }] }, { a: "1" }), true);
    assert.equal(matchesSelector({ matchExpressions: [{ key: "b", operator: "NotIn", values: ["2"] }] }, { b: "2" }), false);
  });

  it("denies what no rule allows once a pod is selected", () => {
    assert.equal(policies.allows(worker, api, 8080), false, "worker has no egress");
    assert.equal(policies.allows(api, worker, 8080), false, "worker takes no ingress");
    assert.equal(policies.allows(api, db, 5433), false);
  });

  it("needs both the source's egress and the target's ingress", () => {
    assert.equal(policies.allows(api, db, 5432), true);
    assert.equal(policies.allows(stranger, db, 5432), false, "db's podSelector peer is its own namespace only");
  });

  it("resolves named ports against the target's container ports", () => {
    assert.equal(policies.allows(internet, api, 8080), true);
    assert.equal(policies.allows(internet, api, 8081), false);
  });

  it("applies namespace selectors, protocols, ipBlock exceptions and port ranges", () => {
    assert.equal(policies.allows(api, dns, 53, "UDP"), true);
    assert.equal(policies.allows(api, dns, 53, "TCP"), false);
    assert.equal(policies.allows(api, internet, 443), true);
    assert.equal(policies.allows(api, internet, 8005), true);
    assert.equal(policies.allows(api, internet, 8011), false);
    assert.equal(policies.allows(api, { ip: "169.254.169.254" }, 443), false);
    assert.equal(policies.allows(api, { ip: "10.9.9.9" }, 443), false);
    assert.equal(policies.allows(api, stranger, 443), false, "an ipBlock meets pod addresses too");
  });
});

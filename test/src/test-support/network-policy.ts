import { component, type K8sObject } from "./helm";
import { workloads } from "./workloads";

/**
 * Answers "may A reach B on port P" over a set of Kubernetes NetworkPolicies,
 * as the NetworkPolicy API defines it: a pod selected by a policy of a type is
 * isolated for that direction and then takes only what some selecting policy's
 * rules allow; a connection needs the source's egress and the target's ingress.
 * ipBlocks are matched against pod addresses too (the stricter reading: a
 * plugin may apply them to pod traffic), so "0.0.0.0/0" without the cluster
 * ranges excepted counts as reaching the cluster.
 */

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}

/** A pod (namespace and labels set) or an address outside the cluster (ip only). */
export interface Endpoint {
  ip: string;
  namespace?: string;
  labels?: Record<string, string>;
  ports?: ContainerPort[];
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[];
}

interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

interface PolicyPort {
  protocol?: string;
  port?: number | string;
  endPort?: number;
}

interface Rule {
  from?: Peer[];
  to?: Peer[];
  ports?: PolicyPort[];
}

interface NetworkPolicySpec {
  podSelector: LabelSelector;
  policyTypes?: ("Ingress" | "Egress")[];
  ingress?: Rule[];
  egress?: Rule[];
}

export function matchesSelector(selector: LabelSelector, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = key in labels;
    const ok =
      operator === "In"
        ? has && values.includes(labels[key]!)
        : operator === "NotIn"
          ? !has || !values.includes(labels[key]!)
          : operator === "Exists"
            ? has
            : !has;
    if (!ok) return false;
  }
  return true;
}

function ipv4(address: string): number {
  const parts = address.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new Error(`not an IPv4 address: ${address}`);
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

export function inCidr(address: string, cidr: string): boolean {
  if (cidr.includes(":")) return false;
  const [base, bits] = cidr.split("/");
  const prefix = Number(bits ?? 32);
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
  return (ipv4(address) & mask) >>> 0 === (ipv4(base!) & mask) >>> 0;
}

export class NetworkPolicies {
  private readonly policies: { namespace: string; spec: NetworkPolicySpec }[];

  /** namespaces: each namespace's labels (kubernetes.io/metadata.name is added). */
  constructor(
    objects: K8sObject[],
    defaultNamespace: string,
    private readonly namespaces: Record<string, Record<string, string>> = {},
  ) {
    this.policies = objects
      .filter((o) => o.kind === "NetworkPolicy")
      .map((o) => ({ namespace: o.metadata.namespace ?? defaultNamespace, spec: o.spec as NetworkPolicySpec }));
  }

  /** May `from` open a connection to `to` on `port`/`protocol`? */
  allows(from: Endpoint, to: Endpoint, port: number, protocol = "TCP"): boolean {
    return this.direction("Egress", from, to, to, port, protocol) && this.direction("Ingress", to, from, to, port, protocol);
  }

  private namespaceLabels(namespace: string): Record<string, string> {
    return { ...this.namespaces[namespace], "kubernetes.io/metadata.name": namespace };
  }

  /** Whether `subject`'s policies of one direction let traffic with `peer` through (target holds the named ports). */
  private direction(type: "Ingress" | "Egress", subject: Endpoint, peer: Endpoint, target: Endpoint, port: number, protocol: string): boolean {
    if (subject.namespace === undefined) return true;
    const selecting = this.policies.filter(
      (p) => p.namespace === subject.namespace && matchesSelector(p.spec.podSelector, subject.labels ?? {}) && this.types(p.spec).includes(type),
    );
    if (selecting.length === 0) return true;
    return selecting.some((policy) => {
      const rules = (type === "Ingress" ? policy.spec.ingress : policy.spec.egress) ?? [];
      return rules.some((rule) => {
        const peers = type === "Ingress" ? rule.from : rule.to;
        const peerOk = peers === undefined || peers.length === 0 || peers.some((p) => this.peerMatches(p, peer, policy.namespace));
        return peerOk && portMatches(rule.ports, target, port, protocol);
      });
    });
  }

  private types(spec: NetworkPolicySpec): ("Ingress" | "Egress")[] {
    return spec.policyTypes ?? (spec.egress ? ["Ingress", "Egress"] : ["Ingress"]);
  }

  private peerMatches(peer: Peer, endpoint: Endpoint, policyNamespace: string): boolean {
    if (peer.ipBlock) {
      return inCidr(endpoint.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((cidr) => inCidr(endpoint.ip, cidr));
    }
    if (endpoint.namespace === undefined) return false;
    const namespaceOk = peer.namespaceSelector
      ? matchesSelector(peer.namespaceSelector, this.namespaceLabels(endpoint.namespace))
      : endpoint.namespace === policyNamespace;
    const podOk = peer.podSelector ? matchesSelector(peer.podSelector, endpoint.labels ?? {}) : true;
    return namespaceOk && podOk;
  }
}

function portMatches(ports: PolicyPort[] | undefined, target: Endpoint, port: number, protocol: string): boolean {
  if (ports === undefined || ports.length === 0) return true;
  return ports.some((p) => {
    if ((p.protocol ?? "TCP") !== protocol) return false;
    if (p.port === undefined) return true;
    if (typeof p.port === "string") {
      return (target.ports ?? []).some((c) => c.name === p.port && c.containerPort === port && (c.protocol ?? "TCP") === protocol);
    }
    return p.endPort === undefined ? p.port === port : port >= p.port && port <= p.endPort;
  });
}

/** Each workload's pods as one endpoint, by component (the release's namespace, the pod template's labels and ports, an address of its own). */
export function podEndpoints(objects: K8sObject[], namespace: string): Map<string, Endpoint> {
  const pods = new Map<string, Endpoint>();
  workloads(objects).forEach((w, i) => {
    pods.set(component(w) ?? w.metadata.name, {
      ip: `10.244.${Math.floor(i / 200)}.${(i % 200) + 10}`,
      namespace: w.metadata.namespace ?? namespace,
      labels: w.spec.template.metadata?.labels ?? {},
      ports: [...(w.spec.template.spec.initContainers ?? []), ...w.spec.template.spec.containers].flatMap((c) => c.ports ?? []),
    });
  });
  return pods;
}

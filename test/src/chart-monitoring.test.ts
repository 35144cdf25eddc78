import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { evaluation, rendered } from "./test-support/chart-renders";
import { type K8sObject, ofKind } from "./test-support/helm";
import { documentedMetrics } from "./test-support/prometheus";
import { metricsOfQuery } from "./test-support/promql";
import { deploymentOf, HEALTH_PORT, resolvePort, SERVICES } from "./test-support/workloads";

/** The Prometheus Operator objects and the Grafana dashboard (issue 16). */

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

  it("carries the labels a Prometheus selects by (kube-prometheus-stack's release), beside the chart's own", () => {
    const objects = evaluation({
      set: [
        "metrics.serviceMonitor.enabled=true",
        "metrics.prometheusRule.enabled=true",
        "metrics.serviceMonitor.labels.release=kube-prometheus-stack",
        "metrics.prometheusRule.labels.release=kube-prometheus-stack",
        "metrics.prometheusRule.labels.role=alert-rules",
      ],
    });
    const [monitor] = ofKind(objects, "ServiceMonitor");
    const [rule] = ofKind(objects, "PrometheusRule");
    assert.equal(monitor?.metadata.labels?.release, "kube-prometheus-stack");
    assert.deepEqual([rule?.metadata.labels?.release, rule?.metadata.labels?.role], ["kube-prometheus-stack", "alert-rules"]);
    for (const object of [monitor!, rule!]) assert.equal(object.metadata.labels?.["app.kubernetes.io/name"], "pressroom");
    const production = rendered("production");
    for (const kind of ["ServiceMonitor", "PrometheusRule"])
      assert.equal(ofKind(production, kind)[0]?.metadata.labels?.release, "kube-prometheus-stack", `production ${kind}`);
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

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT } from "@pressroom/stack";
import { documentedMetrics } from "./test-support/prometheus";
import { metricsOfQuery } from "./test-support/promql";

/**
 * docs/metrics.md lists what the services export (metrics.e2e.test.ts proves
 * it with real traffic); the dashboard and the alerts may query nothing else.
 */
describe("the Grafana dashboard and the Prometheus alerts the chart installs", () => {
  const exported = new Set(documentedMetrics().map((m) => m.name));
  const dashboard = JSON.parse(readFileSync(path.join(REPO_ROOT, "charts", "pressroom", "files", "grafana-dashboard.json"), "utf8")) as {
    panels: { title: string; targets?: { expr: string }[] }[];
  };
  const rules = readFileSync(path.join(REPO_ROOT, "charts", "pressroom", "files", "prometheus-rules.yaml"), "utf8");
  const alerts = [...rules.matchAll(/^ {6}- alert: (\S+)\n {8}expr: (.+)$/gm)].map((m) => ({ name: m[1]!, expr: m[2]! }));

  it("reads metric names out of PromQL", () => {
    assert.deepEqual(
      metricsOfQuery(
        'histogram_quantile(0.99, sum by (le, http_route) (rate(http_server_request_duration_bucket{outcome="x"}[5m]))) / ignoring (a) group_left sum(up)',
      ),
      ["http_server_request_duration", "up"],
    );
  });

  it("the dashboard queries only exported metrics, and every metric of the table has a panel", () => {
    const queried = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, names: metricsOfQuery(target.expr) })));
    assert.ok(queried.length >= 30, `${queried.length} queries`);
    const unknown = queried.flatMap(({ panel, names }) => names.filter((name) => !exported.has(name)).map((name) => `${panel}: ${name}`));
    assert.deepEqual(unknown, []);
    const shown = new Set(queried.flatMap((q) => q.names));
    assert.deepEqual(
      [...exported].filter((name) => !shown.has(name)),
      [],
    );
  });

  it("the alerts cover queue lag, render failures, 5xx, webhook give-ups and event-loop delay, on exported metrics only", () => {
    assert.deepEqual(
      alerts.map((a) => a.name),
      [
        "PressroomRenderQueueLagHigh",
        "PressroomRenderFailuresOnOurSide",
        "PressroomRenderFailureRatioHigh",
        "PressroomGateway5xxRatioHigh",
        "PressroomWebhookGiveUps",
        "PressroomEventLoopDelayHigh",
      ],
    );
    const unknown = alerts.flatMap((alert) =>
      metricsOfQuery(alert.expr)
        .filter((name) => !exported.has(name))
        .map((name) => `${alert.name}: ${name}`),
    );
    assert.deepEqual(unknown, []);
    assert.match(rules, /alert: PressroomRenderQueueLagHigh\n.*pressroom_render_queue_lag.*\n {8}for: 5m/);
  });
});

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { chartTopology, consumers, streams } from "@pressroom/platform";
import { evaluation, FREE_UPGRADES, NATS_USERS } from "./test-support/chart-renders";
import { CHART_DIR, type K8sObject, ofKind, renderError } from "./test-support/helm";
import { deploymentOf } from "./test-support/workloads";

/** The render pool scaled by KEDA on the RENDER queue, the gateway by an HPA, and the bounds the values may set. */

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

  it("KEDA reads the bundled NATS at its name under the cluster's domain, in the global account unless told the account of an external NATS", () => {
    const trigger = (objects: K8sObject[]) => ofKind<ScaledObject>(objects, "ScaledObject")[0]!.spec.triggers[0]!.metadata;
    const nats = ofKind(evaluation(), "Service").find((s) => s.metadata.name.endsWith("-nats"))!.metadata.name;
    assert.deepEqual(
      { endpoint: trigger(evaluation()).natsServerMonitoringEndpoint, account: trigger(evaluation()).account },
      { endpoint: `${nats}.pressroom.svc.cluster.local:8222`, account: "$G" },
    );
    const custom = trigger(evaluation({ set: ["clusterDomain=corp.internal"] }));
    assert.equal(custom.natsServerMonitoringEndpoint, `${nats}.pressroom.svc.corp.internal:8222`);
    const external = trigger(
      evaluation({
        set: [
          "nats.enabled=false",
          "nats.url=nats://nats.nats:4222",
          "nats.monitoringEndpoint=nats.nats.svc:8222",
          "render.keda.account=PRESSROOM",
          ...NATS_USERS.map((user) => `secrets.natsPasswords.${user}=pw-${user}`),
        ],
      }),
    );
    assert.deepEqual({ endpoint: external.natsServerMonitoringEndpoint, account: external.account }, { endpoint: "nats.nats.svc:8222", account: "PRESSROOM" });
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

describe("values that would fail later are refused (issue 45)", () => {
  const refused = (set: string[]) => renderError({ set: [FREE_UPGRADES, ...set] });

  it("a gateway minimum of 0 (the HPA cannot scale to zero, and the gateway is the only way in)", () => {
    assert.match(refused(["gateway.autoscaling.enabled=true", "gateway.autoscaling.minReplicas=0"]), /gateway\/autoscaling\/minReplicas.*minimum/);
    assert.match(refused(["gateway.replicas=0"]), /gateway\/replicas.*minimum/);
  });

  it("a minimum above its maximum, for the gateway's HPA and render's ScaledObject, naming both values", () => {
    assert.match(
      refused(["gateway.autoscaling.minReplicas=5", "gateway.autoscaling.maxReplicas=3"]),
      /gateway\.autoscaling\.minReplicas \(5\) is above gateway\.autoscaling\.maxReplicas \(3\)/,
    );
    assert.match(
      refused(["render.keda.minReplicas=12", "render.keda.maxReplicas=10"]),
      /render\.keda\.minReplicas \(12\) is above render\.keda\.maxReplicas \(10\)/,
    );
  });

  it("a Chromium port that is one of the worker's own (gRPC 7000, health 9090) in the same pod", () => {
    for (const port of [7000, 9090]) assert.match(refused([`render.chromium.port=${port}`]), /render\/chromium\/port/);
  });

  it("fewer than two render pods, which would leave the template catalog down while one drains", () => {
    assert.match(refused(["render.keda.minReplicas=1"]), /render\/keda\/minReplicas.*minimum/);
    assert.match(refused(["render.keda.enabled=false", "render.replicas=1"]), /render\/replicas.*minimum/);
  });

  it("the same values at their limits are accepted (the control)", () => {
    const objects = evaluation({
      set: [
        "gateway.autoscaling.enabled=true",
        "gateway.autoscaling.minReplicas=3",
        "gateway.autoscaling.maxReplicas=3",
        "render.keda.minReplicas=2",
        "render.keda.maxReplicas=2",
        "render.chromium.port=9223",
      ],
    });
    assert.equal(ofKind<ScaledObject>(objects, "ScaledObject")[0]!.spec.minReplicaCount, 2);
  });
});

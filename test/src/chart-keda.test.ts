import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { subjects } from "@pressroom/platform";
import { provisionNats } from "@pressroom/stack";
import { connect, type JsMsg, type NatsConnection } from "nats";
import { bundledNats, runBundledNats, type RunningNats } from "./test-support/bundled-nats";
import { rendered } from "./test-support/chart-renders";
import { type K8sObject, ofKind } from "./test-support/helm";
import { desiredReplicas, kedaLag, type NatsJetStreamTrigger } from "./test-support/keda-scaler";
import { allContainers, effectiveEnv } from "./test-support/workloads";

/**
 * Autoscaling by queue depth, proven without KEDA (issue 45): the chart's bundled NATS runs
 * with its rendered configuration and users, the provision step makes the topology, the
 * gateway's user queues a burst of render commands, and the render user's pulls drain them,
 * while the replica count is read as KEDA's nats-jetstream scaler and the HPA would compute it,
 * with the account, stream, consumer, threshold and bounds of the rendered ScaledObject.
 */

interface ScaledObject extends K8sObject {
  spec: { minReplicaCount: number; maxReplicaCount: number; triggers: { type: string; metadata: NatsJetStreamTrigger }[] };
}

describe("KEDA's reading of the RENDER queue follows its lag up and back down (issue 45)", () => {
  let dir: string;
  let nats: RunningNats;
  let passwords: Record<string, string>;
  let trigger: NatsJetStreamTrigger;
  let bounds: { min: number; max: number };
  const connections: NatsConnection[] = [];

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-chart-keda-"));
    const objects = rendered("evaluation");
    const [scaled] = ofKind<ScaledObject>(objects, "ScaledObject");
    assert.equal(scaled?.spec.triggers[0]?.type, "nats-jetstream");
    trigger = scaled.spec.triggers[0]!.metadata;
    bounds = { min: scaled.spec.minReplicaCount, max: scaled.spec.maxReplicaCount };
    const bundled = bundledNats(objects);
    passwords = bundled.passwords;
    nats = await runBundledNats(dir, bundled);
    const provision = allContainers(objects).find(({ container }) => container.name === "provision-nats")!.container;
    await provisionNats(nats.url, { ...effectiveEnv(provision, objects), NATS_URL: nats.url });
  });
  after(async () => {
    await Promise.all(connections.map((nc) => nc.close()));
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const as = async (user: string): Promise<NatsConnection> => {
    const nc = await connect({ servers: nats.url, user, pass: passwords[user], maxReconnectAttempts: 0 });
    connections.push(nc);
    return nc;
  };

  it("from the chart's minimum, up with a burst to its maximum, and back to the minimum as the render workers ack", async () => {
    const monitoring = new URL(nats.monitoring).host;
    const gateway = (await as("gateway")).jetstream();
    const render = (await as("render")).jetstream();
    let sent = 0;
    const queue = async (count: number) => {
      for (let i = 0; i < count; i++, sent++) {
        const command = jobEventsV1.RenderCommand.fromPartial({ jobId: `job_keda_${sent}`, keyId: "key_keda" });
        await gateway.publish(subjects.renderRequested, jobEventsV1.RenderCommand.encode(command).finish(), { msgID: `job_keda_${sent}` });
      }
    };
    let replicas = bounds.min;
    const read = async () => {
      const lag = await kedaLag(trigger, monitoring);
      replicas = desiredReplicas(trigger, bounds, replicas, lag);
      return { lag, replicas };
    };
    const threshold = Number(trigger.lagThreshold);

    assert.deepEqual(await read(), { lag: 0, replicas: bounds.min }, "an empty queue: the minimum");
    await queue(threshold * bounds.min + 1);
    assert.deepEqual(await read(), { lag: threshold * bounds.min + 1, replicas: bounds.min + 1 }, "one command past the minimum's share: one more replica");
    await queue(threshold * bounds.max * 2 - sent);
    assert.deepEqual(await read(), { lag: threshold * bounds.max * 2, replicas: bounds.max }, "a burst of twice the maximum's share: the maximum, no more");

    const consumer = await render.consumers.get(trigger.stream, trigger.consumer);
    const pull = async (count: number): Promise<JsMsg[]> => {
      const messages: JsMsg[] = [];
      for await (const message of await consumer.fetch({ max_messages: count, expires: 2_000 })) messages.push(message);
      return messages;
    };
    const inFlight = await pull(threshold * 3);
    assert.equal((await read()).lag, threshold * bounds.max * 2, "commands being rendered still count (num_ack_pending)");
    for (const message of inFlight) message.ack();

    const down: number[] = [];
    for (;;) {
      const { lag, replicas: now } = await read();
      down.push(now);
      if (lag === 0) break;
      for (const message of await pull(threshold * 2)) message.ack();
    }
    assert.ok(
      down.every((n, i) => i === 0 || n <= down[i - 1]!),
      `never up while draining: ${down.join(" → ")}`,
    );
    assert.equal(down[0], bounds.max, `still at the maximum with ${threshold * (bounds.max * 2 - 3)} queued: ${down.join(" → ")}`);
    assert.ok(new Set(down).size > 2, `steps down through the counts between: ${down.join(" → ")}`);
    assert.equal(down.at(-1), bounds.min, `back to the minimum once drained: ${down.join(" → ")}`);
  });

  it("reads the stream where the rendered trigger says: another account's name finds no stream", async () => {
    await assert.rejects(kedaLag({ ...trigger, account: "PRESSROOM" }, new URL(nats.monitoring).host), /stream not found/);
  });
});

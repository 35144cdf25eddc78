import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startPrivateNats, type PrivateNats } from "@pressroom/stack";
import { AckPolicy, connect, nanos, RetentionPolicy, type JsMsg, type NatsConnection } from "nats";
import { ConsumerLoop } from "@pressroom/platform";

/** Handles messages for longer than the consumer's ack_wait, heartbeating while it works. */
class SlowLoop extends ConsumerLoop {
  readonly seen: Array<{ data: string; delivery: number }> = [];

  protected async handle(msg: JsMsg): Promise<void> {
    this.seen.push({ data: msg.string(), delivery: msg.info.redeliveryCount });
    const heartbeat = setInterval(() => msg.working(), 300);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    clearInterval(heartbeat);
    msg.ack();
  }

  protected onError(): void {}
}

/** Fails on "boom", and so does its onError (a nak on a connection going away throws). */
class BrittleLoop extends ConsumerLoop {
  readonly handled: string[] = [];

  protected async handle(msg: JsMsg): Promise<void> {
    if (msg.string() === "boom") throw new Error("handler failed");
    this.handled.push(msg.string());
    msg.ack();
  }

  protected onError(): void {
    throw new Error("onError failed too");
  }
}

describe("ConsumerLoop (platform), as the render worker and the other consumers use it", () => {
  let dir: string;
  let nats: PrivateNats;
  let nc: NatsConnection;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-loop-"));
    nats = await startPrivateNats(dir);
    nc = await connect({ servers: nats.url });
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: "LOOP", subjects: ["loop.>"], retention: RetentionPolicy.Workqueue });
    await jsm.consumers.add("LOOP", { durable_name: "slow", ack_policy: AckPolicy.Explicit, ack_wait: nanos(1_000), max_deliver: 5 });
    await jsm.streams.add({ name: "BRITTLE", subjects: ["brittle.>"], retention: RetentionPolicy.Workqueue });
    await jsm.consumers.add("BRITTLE", { durable_name: "brittle", ack_policy: AckPolicy.Explicit, ack_wait: nanos(30_000), max_deliver: 1 });
    await jsm.streams.add({ name: "AGAIN", subjects: ["again.>"], retention: RetentionPolicy.Workqueue });
    await jsm.consumers.add("AGAIN", { durable_name: "again", ack_policy: AckPolicy.Explicit, ack_wait: nanos(30_000) });
  });

  after(async () => {
    await nc?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("holds no message while its handlers are busy, so a queued message never spends a delivery waiting", { timeout: 60_000 }, async () => {
    const js = nc.jetstream();
    const work = ["a", "b", "c", "d", "e", "f"];
    for (const data of work) await js.publish("loop.work", data);
    const loop = new SlowLoop({ js, nc, stream: "LOOP", consumer: "slow", concurrency: 2, prefetch: 0 });
    await loop.start();
    while (loop.seen.length < work.length) await new Promise((resolve) => setTimeout(resolve, 100));
    await loop.stop();
    await loop.finish();
    assert.deepEqual(
      loop.seen.sort((x, y) => x.data.localeCompare(y.data)),
      work.map((data) => ({ data, delivery: 1 })),
    );
  });

  it("keeps consuming when a handler and its onError both throw", { timeout: 60_000 }, async () => {
    const js = nc.jetstream();
    for (const data of ["boom", "after-1", "after-2"]) await js.publish("brittle.work", data);
    const loop = new BrittleLoop({ js, stream: "BRITTLE", consumer: "brittle", concurrency: 1 });
    await loop.start();
    const deadline = Date.now() + 30_000;
    while (loop.handled.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    await loop.stop();
    assert.deepEqual(loop.handled, ["after-1", "after-2"]);
  });

  it("asks again for a message when a server restart lost the pull it had waiting", { timeout: 60_000 }, async () => {
    const loop = new BrittleLoop({ js: nc.jetstream(), nc, stream: "AGAIN", consumer: "again", concurrency: 1, prefetch: 0 });
    await loop.start();
    try {
      // Its pull is asked for and waiting on the server, which forgets it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await nats.restart();
      const deadline = Date.now() + 30_000;
      // Published once the client is connected again (a publish times out while it is not).
      for (;;) {
        try {
          await nc.jetstream().publish("again.work", "after the restart");
          break;
        } catch (err) {
          if (Date.now() > deadline) throw err;
        }
      }
      while (loop.handled.length < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(loop.handled, ["after the restart"]);
    } finally {
      await loop.stop();
    }
  });
});

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import { AckPolicy, connect, RetentionPolicy, type JsMsg, type NatsConnection } from "nats";
import { DEFAULT_NATS_URL } from "../config";
import { ConsumerLoop } from "./consumer-loop";

const NATS_URL = process.env.NATS_URL ?? DEFAULT_NATS_URL;
/** Longer than anything below waits: a message held by a stopped loop would show as a miss, not a delay. */
const ACK_WAIT_MS = 60_000;

/** A loop of the prefetch-0 mode (render's): each message it handles is recorded and acked. */
class Recorder extends ConsumerLoop {
  readonly seen: string[] = [];
  protected async handle(msg: JsMsg): Promise<void> {
    this.seen.push(msg.subject);
    msg.ack();
  }
  protected onError(): void {}
}

const until = async (check: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(20);
  return check();
};

/**
 * The prefetch-0 mode against a real JetStream (NATS_URL): a pull that expired is followed by
 * another, a stop while a pull waits ends at once rather than waiting out its expiry, and the
 * stopped loop's pull does not take the next message: another worker gets it at once, not after
 * ack_wait.
 */
describe("consumer loop, a pull when a handler is free", () => {
  const stream = `LOOP_TEST_${randomBytes(4).toString("hex")}`;
  let nc: NatsConnection;

  before(async () => {
    nc = await connect({ servers: NATS_URL }).catch((err: unknown) => {
      throw new Error(`no NATS with JetStream at ${NATS_URL} (start one, or set NATS_URL): ${(err as Error).message}`);
    });
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: stream, subjects: [`${stream}.>`], retention: RetentionPolicy.Workqueue });
    await jsm.consumers.add(stream, { durable_name: "work", ack_policy: AckPolicy.Explicit, ack_wait: ACK_WAIT_MS * 1e6 });
  });
  after(async () => {
    await (await nc.jetstreamManager()).streams.delete(stream).catch(() => undefined);
    await nc.close();
  });

  const loop = () => new Recorder({ js: nc.jetstream(), nc, stream, consumer: "work", concurrency: 1, prefetch: 0 });

  it("handles what is published while it runs, the next message as soon as the last is done", async () => {
    const running = loop();
    await running.start();
    try {
      await nc.jetstream().publish(`${stream}.first`);
      await nc.jetstream().publish(`${stream}.second`);
      // Well within the 7 s after which a pull without an answer is taken for lost and asked again.
      assert.ok(await until(() => running.seen.length === 2, 3_000), `handled ${running.seen.length} of 2 in 3 s`);
    } finally {
      await running.stop();
    }
    await running.finish();
    assert.deepEqual(running.seen, [`${stream}.first`, `${stream}.second`]);
  });

  it("asks again once its pull expired (after 5 s) with nothing to deliver", async () => {
    const idle = loop();
    await idle.start();
    try {
      // After the first pull's expiry, before the 7 s at which a pull without an answer is taken for lost.
      await sleep(5_500);
      await nc.jetstream().publish(`${stream}.late`);
      assert.ok(await until(() => idle.seen.length === 1, 1_000), "no pull followed the expired one: the message waited for the watchdog (or for ever)");
    } finally {
      await idle.stop();
    }
  });

  it("stops without waiting out the pull under way, and leaves the next message to another worker", async () => {
    const stopping = loop();
    await stopping.start();
    // Its pull is asked for and waiting on the server.
    await sleep(300);
    const stopped = await Promise.race([stopping.stop().then(() => "stopped"), sleep(4_000).then(() => "still waiting")]);
    assert.equal(stopped, "stopped", "stop() waited for the pull's expiry (5 s)");

    await nc.jetstream().publish(`${stream}.second`);
    const other = loop();
    await other.start();
    try {
      assert.ok(await until(() => other.seen.length === 1, 10_000), "the message went to the stopped loop's pull: it waits out ack_wait");
      assert.deepEqual(stopping.seen, []);
    } finally {
      await other.stop();
    }
  });

  it("stops on a connection that closed first", async () => {
    const own = await connect({ servers: NATS_URL });
    const orphaned = new Recorder({ js: own.jetstream(), nc: own, stream, consumer: "work", concurrency: 1, prefetch: 0 });
    await orphaned.start();
    await own.close();
    await orphaned.stop();
  });
});

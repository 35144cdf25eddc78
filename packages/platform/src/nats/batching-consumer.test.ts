import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import { AckPolicy, connect, RetentionPolicy, type NatsConnection } from "nats";
import { DEFAULT_NATS_URL } from "../config";
import { createLogger } from "../logger";
import { BatchingEventConsumer } from "./consumer-loop";

const NATS_URL = process.env.NATS_URL ?? DEFAULT_NATS_URL;
/** Long enough that a batch held back by it cannot be mistaken for one that went at once, even on a loaded machine. */
const INTERVAL_MS = 2_000;

/** Records each batch it is handed: when it started and the events in it (the messages' payloads). */
class Recorder extends BatchingEventConsumer<string> {
  readonly batches: { at: number; events: string[] }[] = [];
  protected async applyBatch(events: string[]): Promise<void> {
    this.batches.push({ at: performance.now(), events });
  }
  protected onError(): void {}
}

const until = async (check: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(20);
  return check();
};

/**
 * The projections' batching against a real JetStream (NATS_URL): an event after a quiet interval
 * goes at once, a steady stream costs one batch per interval, and a backlog goes in full batches
 * one after the other.
 */
describe("batching event consumer", () => {
  let nc: NatsConnection;
  let stream = "";

  before(async () => {
    nc = await connect({ servers: NATS_URL }).catch((err: unknown) => {
      throw new Error(`no NATS with JetStream at ${NATS_URL} (start one, or set NATS_URL): ${(err as Error).message}`);
    });
  });
  after(async () => {
    await nc.close();
  });

  /** A new stream and consumer for each case, with `stored` events in it before the consumer starts. */
  const start = async (maxBatch: number, stored = 0) => {
    const jsm = await nc.jetstreamManager();
    if (stream) await jsm.streams.delete(stream).catch(() => undefined);
    stream = `BATCH_TEST_${randomBytes(4).toString("hex")}`;
    await jsm.streams.add({ name: stream, subjects: [`${stream}.>`], retention: RetentionPolicy.Workqueue });
    await jsm.consumers.add(stream, { durable_name: "projection", ack_policy: AckPolicy.Explicit });
    for (let i = 0; i < stored; i++) await nc.jetstream().publish(`${stream}.event`, `stored ${i}`);
    const recorder = new Recorder(
      { js: nc.jetstream(), stream, consumer: "projection", concurrency: 100 },
      { spanSubject: "test", decode: (msg) => msg.string(), attributes: () => ({}), logger: createLogger("test", "silent") },
      { maxBatch, intervalMs: INTERVAL_MS },
    );
    await recorder.start();
    return recorder;
  };

  it("applies an event that comes after a quiet interval at once, then a steady stream in one batch per interval", async () => {
    const recorder = await start(100);
    try {
      const sent = performance.now();
      await nc.jetstream().publish(`${stream}.event`, "first");
      assert.ok(await until(() => recorder.batches.length === 1, INTERVAL_MS / 2), "the first event waited, as if for others");
      assert.ok(recorder.batches[0]!.at - sent < INTERVAL_MS / 2);
      for (let i = 0; i < 10; i++) {
        await nc.jetstream().publish(`${stream}.event`, `next ${i}`);
        await sleep(20);
      }
      assert.ok(await until(() => recorder.batches.length === 2, 3 * INTERVAL_MS), `${recorder.batches.length} batches`);
      await sleep(200);
      assert.deepEqual(
        recorder.batches.map((b) => b.events.length),
        [1, 10],
        "the ten events that came within the interval make one batch",
      );
      assert.ok(recorder.batches[1]!.at - recorder.batches[0]!.at >= INTERVAL_MS - 50, "the second batch did not wait for the interval");
    } finally {
      await recorder.stop();
    }
  });

  it("follows a full batch at once: a backlog is not held to one batch per interval", async () => {
    const recorder = await start(5, 16);
    try {
      assert.ok(await until(() => recorder.batches.flatMap((b) => b.events).length === 16, 3 * INTERVAL_MS), "not every stored event was applied");
      const sizes = recorder.batches.map((b) => b.events.length);
      const full = recorder.batches.findIndex((b) => b.events.length === 5);
      assert.ok(full >= 0, `no full batch: ${sizes.join(", ")}`);
      const rest = recorder.batches.slice(full);
      assert.ok(rest.at(-1)!.at - rest[0]!.at < INTERVAL_MS / 2, `the batches after the first full one waited: ${sizes.join(", ")}`);
      assert.deepEqual(
        recorder.batches.flatMap((b) => b.events),
        Array.from({ length: 16 }, (_, i) => `stored ${i}`),
      );
    } finally {
      await recorder.stop();
      await (await nc.jetstreamManager()).streams.delete(stream).catch(() => undefined);
    }
  });
});

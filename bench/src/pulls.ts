import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ConsumerLoop } from "@pressroom/platform";
import { startPrivateNats } from "@pressroom/stack";
import { AckPolicy, connect, nanos, RetentionPolicy, type JetStreamClient, type JsMsg, type NatsConnection } from "nats";
import { procStat } from "./proc";
import { median } from "./stats";

/** Messages taken per kind and round: enough for 10 ms CPU ticks to resolve a hundredth of a millisecond per message. */
const MESSAGES = 1_000;
const STREAM = "PULLS";
const CONSUMER = "one-at-a-time";

/** Per message, one entry a round. */
interface Measured {
  client: number[];
  server: number[];
  wall: number[];
}

/** Takes MESSAGES messages one at a time, each acked before the next is asked for. */
type Taker = (js: JetStreamClient, nc: NatsConnection) => Promise<void>;

/** nats.js's fetch of one message, on a new inbox each time: how the render worker took its commands. */
const fetchEach: Taker = async (js) => {
  const consumer = await js.consumers.get(STREAM, CONSUMER);
  for (let taken = 0; taken < MESSAGES;) {
    for await (const msg of await consumer.fetch({ max_messages: 1, expires: 5_000 })) {
      msg.ack();
      taken++;
    }
  }
};

/** The ConsumerLoop's prefetch-0 mode (KeptPull): how it takes them now. */
const keptPull: Taker = async (js, nc) => {
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  let taken = 0;
  const loop = new (class extends ConsumerLoop {
    protected async handle(msg: JsMsg): Promise<void> {
      msg.ack();
      if (++taken === MESSAGES) done();
    }
    protected onError(): void {}
  })({ js, nc, stream: STREAM, consumer: CONSUMER, concurrency: 1, prefetch: 0 });
  await loop.start();
  await all;
  await loop.stop();
};

/**
 * What taking one message of a durable pull consumer costs, the way the render worker takes its
 * commands (one at a time, only when a handler is free): a fetch per message against the kept
 * subscription. A private nats-server; each round queues MESSAGES messages for each kind in turn and
 * counts, while they are taken, the CPU of this process (the client) and of the server, and the
 * time. The table gives each kind's medians over `rounds` rounds and the median of the per-round ratios.
 */
export async function pullsBench(rounds: number): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-pulls-"));
  const nats = await startPrivateNats(dir);
  const nc = await connect({ servers: nats.url });
  try {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: STREAM, subjects: ["pulls.>"], retention: RetentionPolicy.Workqueue });
    await jsm.consumers.add(STREAM, { durable_name: CONSUMER, ack_policy: AckPolicy.Explicit, ack_wait: nanos(30_000) });
    const js = nc.jetstream();
    const serverPid = nats.process.pid!;
    const kinds: [string, Taker][] = [
      ["a fetch per message (before)", fetchEach],
      ["one kept subscription (KeptPull)", keptPull],
    ];
    const measured: Measured[] = kinds.map(() => ({ client: [], server: [], wall: [] }));
    for (let round = 0; round < rounds; round++) {
      for (const [k, [, take]] of kinds.entries()) {
        await Promise.all(Array.from({ length: MESSAGES }, (_, i) => js.publish("pulls.work", String(i))));
        const server0 = procStat(serverPid).cpuMs;
        const client0 = process.cpuUsage();
        const start = performance.now();
        await take(js, nc);
        await nc.flush();
        const wall = performance.now() - start;
        const client = process.cpuUsage(client0);
        measured[k]!.client.push((client.user + client.system) / 1000 / MESSAGES);
        measured[k]!.server.push((procStat(serverPid).cpuMs - server0) / MESSAGES);
        measured[k]!.wall.push(wall / MESSAGES);
      }
    }
    const [before, after] = measured as [Measured, Measured];
    const ratios = (of: (m: Measured) => number[]) => median(of(after).map((value, round) => value / of(before)[round]!));
    return [
      `${rounds} rounds, each ${MESSAGES} messages taken one at a time (each acked before the next is asked for) by each kind in turn, from a private nats-server; per message, medians over the rounds.`,
      "",
      "| how | client CPU | server CPU | time |",
      "|---|---:|---:|---:|",
      ...kinds.map(([name], k) => {
        const m = measured[k]!;
        return `| ${name} | ${median(m.client).toFixed(3)} ms | ${median(m.server).toFixed(3)} ms | ${median(m.wall).toFixed(3)} ms |`;
      }),
      `| kept against fetch, median of the rounds' ratios | ${ratios((m) => m.client).toFixed(2)}× | ${ratios((m) => m.server).toFixed(2)}× | ${ratios((m) => m.wall).toFixed(2)}× |`,
    ].join("\n");
  } finally {
    await nc.close();
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

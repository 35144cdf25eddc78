import { readFileSync } from "node:fs";
import { descendantsOf, startTestStack, type TestStack } from "@pressroom/stack";
import { benchDocuments, scriptedInvoice, type BenchDocument } from "./documents";
import { groupCpuMs } from "./engine";
import { Floor, type FloorKind } from "./floor";
import { JsreportPeer } from "./jsreport";
import { benchKeys, documentThroughPressroom, renderThroughPressroom } from "./pressroom";
import { allProcStats, chromiumType, treePssMiB } from "./proc";
import { median, runTasks, summarise, type RunStats } from "./stats";

/** Issue 43's targets, each a ratio of Pressroom to its reference: one of the two floors (see Floor), or jsreport's best. */
const TARGETS = {
  renderPodOneKey: { label: "render pod CPU per invoice, one key at c=4 / the hot floor's (c=2)", reference: "hot", bound: 1.25, atMost: true },
  renderPodEightKeys: {
    label: "render pod CPU per invoice, eight keys in rotation at c=4 / the hot floor's (c=2)",
    reference: "hot",
    bound: 1.35,
    atMost: true,
  },
  renderPodScripted: { label: "render pod CPU per scripted invoice, one key at c=4 / the safe floor's (c=2)", reference: "safe", bound: 0.8, atMost: true },
  wholeMachine: { label: "whole-machine CPU per invoice at c=4 / the hot floor's (c=2)", reference: "hot", bound: 1.9, atMost: true },
  oneTripP50: { label: "one trip p50 at c=1 / the hot floor's p50 at c=1 (invoice)", reference: "hot", bound: 1.6, atMost: true },
  throughputVsJsreport: { label: "c=4 invoice throughput / jsreport's best (c=2 or c=4)", reference: "jsreport", bound: 2.5, atMost: false },
  socialCard: { label: "social card throughput at c=4 / the hot floor's c=2", reference: "hot", bound: 1, atMost: false },
} as const;
type Target = keyof typeof TARGETS;
type FloorTarget = Exclude<Target, "throughputVsJsreport">;
const FLOOR_TARGETS = (Object.keys(TARGETS) as Target[]).filter((t): t is FloorTarget => t !== "throughputVsJsreport");

/** After the warm-up, before the timed tasks. */
const SETTLE_MS = 1_500;

/** What one measured burst cost: wall-clock statistics and CPU per task. */
interface Burst {
  stats: RunStats;
  /** CPU ms per task of the side's own processes (the floor: its Chromium and this process; Pressroom: the render worker and its Chromium). */
  podCpu: number;
  /** CPU ms per task of every process taking part (Pressroom: the six services, NATS, PostgreSQL and this client). */
  wholeCpu: number;
  /** CPU ms per task by process group (Pressroom: "render pod", each other service, "nats-server", "postgres", "bench client"). */
  groups: Map<string, number>;
}

/** CPU ms so far by process group. */
export type CpuSample = Map<string, number>;
const POD = "render pod";
const sum = (sample: CpuSample) => [...sample.values()].reduce((total, ms) => total + ms, 0);

/**
 * Runs `count` tasks at `concurrency`, after `warmup` untimed ones per worker and a pause (the
 * windows those opened for their keys are warm by then: the steady state of keys that render
 * again), measuring CPU around the timed ones.
 */
async function burst(concurrency: number, count: number, warmup: number, task: (i: number) => Promise<unknown>, cpu: () => CpuSample): Promise<Burst> {
  let next = 0;
  await runTasks(
    concurrency,
    warmup * concurrency,
    () => task(next++),
    () => undefined,
  );
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const latencies: number[] = [];
  const before = cpu();
  const started = performance.now();
  await runTasks(
    concurrency,
    count,
    () => task(next++),
    (ms) => latencies.push(ms),
  );
  const wallMs = performance.now() - started;
  const after = cpu();
  const groups = new Map([...after].map(([group, ms]) => [group, (ms - (before.get(group) ?? 0)) / count]));
  return { stats: summarise(latencies, wallMs), podCpu: groups.get(POD)!, wholeCpu: sum(groups), groups };
}

/** This process's CPU ms so far. */
function ownCpuMs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/** The floor at `concurrency`, started, warmed, measured and closed: its process start and browser launch are outside the numbers. */
async function floorBurst(chromium: string, kind: FloorKind, doc: BenchDocument, concurrency: number, count: number): Promise<Burst> {
  const floor = await Floor.start(chromium, concurrency, kind);
  try {
    return await burst(
      concurrency,
      count,
      2,
      (i) => floor.renderOn(i % concurrency, doc),
      () => new Map([[POD, groupCpuMs(floor.pid()) + ownCpuMs()]]),
    );
  } finally {
    await floor.close();
  }
}

/**
 * The render pod's CPU ms so far, as a function to call: the render worker's process and its
 * descendants in its process group (the post-processing child), each with what it reaped (a
 * recycled Chromium's browser process), and the process groups of its other descendants (its
 * Chromium), renderers that exited included (their zygote reaped them). A recycled Chromium's other
 * processes are not reaped by the browser (a 1,000-render round with a recycle lost about 120 ms
 * per document): a group's time as last seen, less its members the worker reaps, is kept once it is
 * gone, and a timer refreshes what was seen every TRACK_MS while render runs.
 */
function renderPodCpu(stack: TestStack): () => number {
  const root = stack.services.processes.get("render")!.child.pid!;
  const seen = new Map<number, { all: number; reapedByWorker: number }>();
  let goneMs = 0;
  const read = () => {
    const all = allProcStats();
    const own = all.find((p) => p.pid === root)?.pgid;
    const descendants = new Set(descendantsOf(root));
    const groups = new Map<number, { all: number; reapedByWorker: number }>();
    for (const p of all) if (descendants.has(p.pid) && p.pgid !== own) groups.set(p.pgid, { all: 0, reapedByWorker: 0 });
    let ms = 0;
    for (const p of all) {
      if (p.pid === root || (descendants.has(p.pid) && p.pgid === own)) ms += p.cpuMs;
      const group = groups.get(p.pgid);
      if (!group || p.pid === root) continue;
      group.all += p.cpuMs;
      if (p.ppid === root) group.reapedByWorker += p.cpuMs;
    }
    for (const [group, sums] of groups) seen.set(group, sums);
    for (const [group, last] of seen) {
      if (groups.has(group)) ms += last.all;
      else {
        goneMs += last.all - last.reapedByWorker;
        seen.delete(group);
      }
    }
    return ms + goneMs;
  };
  const render = stack.services.processes.get("render")!.child;
  const timer = setInterval(() => (render.exitCode === null && render.signalCode === null ? read() : clearInterval(timer)), TRACK_MS).unref();
  return read;
}

/**
 * How often the render pod's Chromium groups are looked at between samples (renderPodCpu): a
 * recycled browser drains at most its slots' renders in its last second, a few tenths of a ms per
 * document over the 2,000 renders between recycles.
 */
const TRACK_MS = 1_000;

/**
 * Pressroom's CPU so far: the render pod, and every process taking part: the other services,
 * the stack's nats-server, the PostgreSQL backends connected to its database (the server is
 * shared with other work on the machine: its own background processes are left out), this client.
 */
export function pressroomCpu(stack: TestStack): () => CpuSample {
  const database = new URL(stack.databaseUrl).pathname.slice(1);
  const roots = new Map<string, number>([...stack.services.processes].filter(([name]) => name !== "render").map(([name, p]) => [name, p.child.pid!]));
  roots.set("nats-server", stack.nats.process.pid!);
  // A backend a pool closed is reaped by the postmaster, which is not the stack's: its time as last
  // seen is kept, so the group's sum never drops (what it spent after the last sample is lost).
  const backends = new Map<number, number>();
  let closedBackendsMs = 0;
  const pod = renderPodCpu(stack);
  return () => {
    const groupOf = new Map<number, string>([[process.pid, "bench client"]]);
    // This process without its descendants: the stack's services are its children.
    for (const [name, root] of roots) for (const pid of [root, ...descendantsOf(root)]) groupOf.set(pid, name);
    const totals: CpuSample = new Map([
      [POD, pod()],
      ["postgres", 0],
    ]);
    const live = new Set<number>();
    for (const p of allProcStats()) {
      const backend = !groupOf.has(p.pid) && p.comm === "postgres" && backendOf(p.pid) === database;
      if (backend) {
        live.add(p.pid);
        backends.set(p.pid, p.cpuMs);
      }
      const group = groupOf.get(p.pid) ?? (backend ? "postgres" : undefined);
      if (group) totals.set(group, (totals.get(group) ?? 0) + p.cpuMs);
    }
    for (const [pid, ms] of backends) {
      if (live.has(pid)) continue;
      closedBackendsMs += ms;
      backends.delete(pid);
    }
    totals.set("postgres", totals.get("postgres")! + closedBackendsMs);
    return totals;
  };
}

/** The database a PostgreSQL backend serves ("postgres: 15/main: user database 127.0.0.1(port) idle"). */
function backendOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split(" ")[3];
  } catch {
    return undefined;
  }
}

/** Chromium renderer processes under the render service: one per window the engine keeps. */
function renderers(stack: TestStack): number {
  const root = stack.services.processes.get("render")!.child.pid!;
  return descendantsOf(root).filter((pid) => chromiumType(pid) === "renderer").length;
}

/** What one floor measured in a round: each the reference of a floor target. */
type FloorRound = Record<FloorTarget, number>;

/** One floor's bursts of a round: the invoice at c=2 twice (their mean), the scripted invoice at c=2, the invoice at c=1, the social card at c=2. */
async function floorRound(chromium: string, kind: FloorKind, docs: Record<"invoice" | "scripted" | "card", BenchDocument>, count: number): Promise<FloorRound> {
  const invoice = await floorBurst(chromium, kind, docs.invoice, 2, count);
  const scripted = await floorBurst(chromium, kind, docs.scripted, 2, count);
  const invoiceAgain = await floorBurst(chromium, kind, docs.invoice, 2, count);
  const c1 = await floorBurst(chromium, kind, docs.invoice, 1, Math.ceil(count / 2));
  const card = await floorBurst(chromium, kind, docs.card, 2, Math.ceil(count / 2));
  const cpu = (invoice.podCpu + invoiceAgain.podCpu) / 2;
  return {
    renderPodOneKey: cpu,
    renderPodEightKeys: cpu,
    renderPodScripted: scripted.podCpu,
    wholeMachine: cpu,
    oneTripP50: c1.stats.p50,
    socialCard: card.stats.throughput,
  };
}

/**
 * Issue 43's measurements, the way issue 34's baseline was taken: in rounds, each the two floors
 * and Pressroom on the same two cores within a minute of each other, and the median of the
 * rounds' ratios, every one against both floors. Pressroom is the whole stack (business keys, the
 * worker with RENDER_SLOTS=4, or BENCH_RENDER_SLOTS); the floors and jsreport run only while they are
 * measured, after their launch.
 */
export async function efficiency(chromium: string, rounds: number, count: number): Promise<string> {
  const [invoice, , card] = benchDocuments();
  const docs = { invoice: invoice!, scripted: scriptedInvoice(invoice!), card: card! };
  const slots = process.env.BENCH_RENDER_SLOTS ?? "4";
  const stack = await startTestStack({ env: { LOG_LEVEL: "warn", RENDER_SLOTS: slots } });
  const ratios = Object.fromEntries(FLOOR_TARGETS.map((t) => [t, { hot: [] as number[], safe: [] as number[] }])) as Record<
    FloorTarget,
    Record<FloorKind, number[]>
  >;
  const vsJsreport: number[] = [];
  const lines: string[] = [];
  /** The one-key invoice bursts' CPU per invoice by process group, one map per round. */
  const byGroup: Map<string, number>[] = [];
  let idleLine = "";
  try {
    const keys = await benchKeys(stack, 8);
    const cpu = pressroomCpu(stack);
    const oneKey = (doc: BenchDocument) => (_: number) => renderThroughPressroom(stack.baseUrl, keys[0]!, doc);
    const rotation = (i: number) => renderThroughPressroom(stack.baseUrl, keys[i % keys.length]!, docs.invoice);
    const oneTrip = () => documentThroughPressroom(stack.baseUrl, keys[0]!, docs.invoice);
    for (let round = 1; round <= rounds; round++) {
      const hot = await floorRound(chromium, "hot", docs, count);
      const single = await burst(4, count, 6, oneKey(docs.invoice), cpu);
      const safe = await floorRound(chromium, "safe", docs, count);
      const eight = await burst(4, count, 6, rotation, cpu);
      const scripted = await burst(4, count, 6, oneKey(docs.scripted), cpu);
      const trip = await burst(1, Math.ceil(count / 2), 2, oneTrip, cpu);
      const cards = await burst(4, Math.ceil(count / 2), 6, oneKey(docs.card), cpu);
      const jsreport = await Promise.all(
        [2, 4].map(async (concurrency) => {
          const peer = await JsreportPeer.start(chromium, concurrency);
          return peer.run(docs.invoice, concurrency, Math.ceil(count / 2)).finally(() => peer.close());
        }),
      );
      const jsreportBest = Math.max(...jsreport.map((stats) => stats.throughput));
      const pressroom: FloorRound = {
        renderPodOneKey: single.podCpu,
        renderPodEightKeys: eight.podCpu,
        renderPodScripted: scripted.podCpu,
        wholeMachine: single.wholeCpu,
        oneTripP50: trip.stats.p50,
        socialCard: cards.stats.throughput,
      };
      for (const target of FLOOR_TARGETS) {
        ratios[target].hot.push(pressroom[target] / hot[target]);
        ratios[target].safe.push(pressroom[target] / safe[target]);
      }
      vsJsreport.push(single.stats.throughput / jsreportBest);
      const line =
        `| ${round} | ${hot.renderPodOneKey.toFixed(1)} ms | ${safe.renderPodOneKey.toFixed(1)} ms | ${hot.renderPodScripted.toFixed(1)} ms | ${safe.renderPodScripted.toFixed(1)} ms | ` +
        `${single.podCpu.toFixed(1)} ms | ${eight.podCpu.toFixed(1)} ms | ${scripted.podCpu.toFixed(1)} ms | ${single.wholeCpu.toFixed(1)} ms | ` +
        `${hot.oneTripP50.toFixed(0)} / ${safe.oneTripP50.toFixed(0)} ms | ${trip.stats.p50.toFixed(0)} ms | ${single.stats.throughput.toFixed(1)}/s | ${jsreportBest.toFixed(1)}/s | ` +
        `${hot.socialCard.toFixed(1)} / ${safe.socialCard.toFixed(1)}/s | ${cards.stats.throughput.toFixed(1)}/s |`;
      lines.push(line);
      byGroup.push(single.groups);
      process.stdout.write(`${line}\n`);
    }
    idleLine = await idleCost(stack, cpu);
  } finally {
    await stack.stop();
  }
  const verdict = (target: Target, value: number) => {
    const { bound, atMost } = TARGETS[target];
    return (atMost ? value <= bound : value >= bound) ? "met" : "missed";
  };
  const targetRow = (target: Target, each: number[]) => {
    const { label, bound, atMost } = TARGETS[target];
    const m = median(each);
    return `| ${label} | ${each.map((r) => r.toFixed(2)).join(", ")} | **${m.toFixed(2)}** | ${atMost ? "≤" : "≥"} ${bound} | ${verdict(target, m)} |`;
  };
  return [
    `Invoice (1 page), the invoice with a script (raw HTML) and the social card; ${count} documents per burst (half as many for c=1, the social card and jsreport), ${rounds} rounds. ` +
      "Each round: the hot floor's bursts (the invoice at c=2, the scripted invoice at c=2, the invoice at c=2 again, the invoice at c=1, the social card at c=2), " +
      "Pressroom with one key at c=4, the safe floor's bursts (the same five), Pressroom with eight keys in rotation at c=4, the scripted invoice with one key at c=4, " +
      "Pressroom's one trip at c=1, its social card at c=4, jsreport at c=2 and c=4. " +
      "A floor's CPU per invoice is the mean of its round's two invoice bursts, its Chromium's and its driver's, without its process start and launch. " +
      `Render pod: the render worker (RENDER_SLOTS=${slots}) and its Chromium. Whole machine: the six services, NATS, PostgreSQL and the bench client.`,
    "",
    "| round | hot floor CPU per invoice | safe floor | hot floor, scripted | safe floor, scripted | render pod, one key | render pod, eight keys | render pod, scripted | whole machine, one key | floors' p50 c=1 (hot / safe) | one trip p50 c=1 | Pressroom c=4 | jsreport best | floors' card c=2 (hot / safe) | Pressroom card c=4 |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...lines,
    "",
    "Every ratio against both floors (medians of the rounds' ratios):",
    "",
    "| measure | vs the hot floor | vs the safe floor |",
    "|---|---|---|",
    ...FLOOR_TARGETS.map(
      (target) => `| ${TARGETS[target].label.split(" / ")[0]} | ${median(ratios[target].hot).toFixed(2)} | ${median(ratios[target].safe).toFixed(2)} |`,
    ),
    "",
    "| target | each round | median | bound | verdict |",
    "|---|---|---|---|---|",
    ...FLOOR_TARGETS.map((target) => targetRow(target, ratios[target][TARGETS[target].reference])),
    targetRow("throughputVsJsreport", vsJsreport),
    "",
    `CPU per invoice by process group, one key at c=4 (the median of the rounds'), for docs/capacity.md: ` +
      [...byGroup[0]!.keys()]
        .map((group) => [group, median(byGroup.map((groups) => groups.get(group) ?? 0))] as const)
        .sort((a, b) => b[1] - a[1])
        .map(([group, ms]) => `${group} ${ms.toFixed(1)}`)
        .join(", ") +
      ".",
    "",
    idleLine,
  ].join("\n");
}

/** What the windows the worker keeps cost while nothing runs: its CPU per second and memory, with their count. */
async function idleCost(stack: TestStack, cpu: () => CpuSample): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const before = cpu().get(POD)!;
  const idleMs = 10_000;
  await new Promise((resolve) => setTimeout(resolve, idleMs));
  const perSecond = (cpu().get(POD)! - before) / (idleMs / 1000);
  const pid = stack.services.processes.get("render")!.child.pid!;
  return (
    `Idle, 5 s after the rounds (10 s, nothing running): the render pod uses ${perSecond.toFixed(1)} ms of CPU per second, ` +
    `with ${renderers(stack)} Chromium renderers (the windows kept: free fresh ones and the keys' own), ${treePssMiB(pid).toFixed(0)} MiB (PSS) for the worker and its Chromium.`
  );
}

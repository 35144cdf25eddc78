import { readFileSync } from "node:fs";
import { descendantsOf, startTestStack, type TestStack } from "@pressroom/stack";
import { benchDocuments, type BenchDocument } from "./documents";
import { groupCpuMs } from "./engine";
import { Floor } from "./floor";
import { JsreportPeer } from "./jsreport";
import { benchKeys, documentThroughPressroom, renderThroughPressroom } from "./pressroom";
import { allProcStats, procStat, treeRssMiB } from "./proc";
import { runTasks, summarise, type RunStats } from "./stats";

/** Issue 34's targets, each a ratio of Pressroom to its reference (the floor, or jsreport's best). */
const TARGETS = {
  renderPodOneKey: { label: "render pod CPU per invoice, one key at c=4 / the floor's (c=2)", bound: 1.15, atMost: true },
  renderPodEightKeys: { label: "render pod CPU per invoice, eight keys in rotation at c=4 / the floor's (c=2)", bound: 1.3, atMost: true },
  wholeMachine: { label: "whole-machine CPU per invoice at c=4 / the floor's (c=2)", bound: 1.7, atMost: true },
  oneTripP50: { label: "one trip p50 at c=1 / the floor's p50 at c=1 (invoice)", bound: 1.6, atMost: true },
  throughputVsJsreport: { label: "c=4 invoice throughput / jsreport's best (c=2 or c=4)", bound: 4, atMost: false },
  socialCard: { label: "social card throughput at c=4 / the floor's c=2 row", bound: 1, atMost: false },
} as const;
type Target = keyof typeof TARGETS;

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
type CpuSample = Map<string, number>;
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
async function floorBurst(chromium: string, doc: BenchDocument, concurrency: number, count: number): Promise<Burst> {
  const floor = await Floor.start(chromium, concurrency);
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

/** The process group of a process. */
function pgidOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
  } catch {
    return undefined;
  }
}

/**
 * The render pod's CPU ms so far: the render worker's process, and the process groups of its
 * descendants (its Chromium), renderers that exited included (their zygote reaped them).
 */
function renderPodCpuMs(stack: TestStack): number {
  const root = stack.services.processes.get("render")!.child.pid!;
  const own = pgidOf(root);
  const groups = new Set(
    descendantsOf(root)
      .map(pgidOf)
      .filter((g): g is number => g !== undefined && g !== own),
  );
  return procStat(root).cpuMs + [...groups].reduce((total, group) => total + groupCpuMs(group), 0);
}

/**
 * Pressroom's CPU so far: the render pod, and every process taking part: the other services,
 * the stack's nats-server, the PostgreSQL backends connected to its database (the server is
 * shared with other work on the machine: its own background processes are left out), this client.
 */
function pressroomCpu(stack: TestStack): () => CpuSample {
  const database = new URL(stack.databaseUrl).pathname.slice(1);
  const roots = new Map<string, number>([...stack.services.processes].filter(([name]) => name !== "render").map(([name, p]) => [name, p.child.pid!]));
  roots.set("nats-server", stack.nats.process.pid!);
  return () => {
    const groupOf = new Map<number, string>([[process.pid, "bench client"]]);
    // This process without its descendants: the stack's services are its children.
    for (const [name, root] of roots) for (const pid of [root, ...descendantsOf(root)]) groupOf.set(pid, name);
    const totals: CpuSample = new Map([[POD, renderPodCpuMs(stack)]]);
    for (const p of allProcStats()) {
      const group = groupOf.get(p.pid) ?? (p.comm === "postgres" && backendOf(p.pid) === database ? "postgres" : undefined);
      if (group) totals.set(group, (totals.get(group) ?? 0) + p.cpuMs);
    }
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
  return descendantsOf(root).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--type=renderer");
    } catch {
      return false;
    }
  }).length;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Issue 34's measurements, the way its baseline was taken: in rounds, each the floor then
 * Pressroom on the same two cores within seconds of each other, and the median of the rounds'
 * ratios. Pressroom is the whole stack (business keys, the worker with RENDER_SLOTS=4); the
 * floor and jsreport run only while they are measured, after their launch.
 */
export async function efficiency(chromium: string, rounds: number, count: number): Promise<string> {
  const [invoice, , card] = benchDocuments();
  const stack = await startTestStack({ env: { LOG_LEVEL: "warn", RENDER_SLOTS: "4" } });
  const ratios: Record<Target, number[]> = {
    renderPodOneKey: [],
    renderPodEightKeys: [],
    wholeMachine: [],
    oneTripP50: [],
    throughputVsJsreport: [],
    socialCard: [],
  };
  const lines: string[] = [];
  /** The one-key invoice bursts' CPU per invoice by process group, one map per round. */
  const byGroup: Map<string, number>[] = [];
  let idleLine = "";
  try {
    const keys = await benchKeys(stack, 8);
    const cpu = pressroomCpu(stack);
    const oneKey = (doc: BenchDocument) => (_: number) => renderThroughPressroom(stack.baseUrl, keys[0]!, doc);
    const rotation = (i: number) => renderThroughPressroom(stack.baseUrl, keys[i % keys.length]!, invoice!);
    const oneTrip = () => documentThroughPressroom(stack.baseUrl, keys[0]!, invoice!);
    for (let round = 1; round <= rounds; round++) {
      const floor = await floorBurst(chromium, invoice!, 2, count);
      const single = await burst(4, count, 6, oneKey(invoice!), cpu);
      const floorAgain = await floorBurst(chromium, invoice!, 2, count);
      const eight = await burst(4, count, 6, rotation, cpu);
      const floorC1 = await floorBurst(chromium, invoice!, 1, Math.ceil(count / 2));
      const trip = await burst(1, Math.ceil(count / 2), 2, oneTrip, cpu);
      const floorCard = await floorBurst(chromium, card!, 2, Math.ceil(count / 2));
      const cards = await burst(4, Math.ceil(count / 2), 6, oneKey(card!), cpu);
      const jsreport = await Promise.all(
        [2, 4].map(async (concurrency) => {
          const peer = await JsreportPeer.start(chromium, concurrency);
          return peer.run(invoice!, concurrency, Math.ceil(count / 2)).finally(() => peer.close());
        }),
      );
      const floorCpu = (floor.podCpu + floorAgain.podCpu) / 2;
      const jsreportBest = Math.max(...jsreport.map((s) => s.throughput));
      const measured: Record<Target, number> = {
        renderPodOneKey: single.podCpu / floorCpu,
        renderPodEightKeys: eight.podCpu / floorCpu,
        wholeMachine: single.wholeCpu / floorCpu,
        oneTripP50: trip.stats.p50 / floorC1.stats.p50,
        throughputVsJsreport: single.stats.throughput / jsreportBest,
        socialCard: cards.stats.throughput / floorCard.stats.throughput,
      };
      for (const target of Object.keys(ratios) as Target[]) ratios[target].push(measured[target]);
      const line =
        `| ${round} | ${floorCpu.toFixed(1)} ms | ${single.podCpu.toFixed(1)} ms | ${eight.podCpu.toFixed(1)} ms | ${single.wholeCpu.toFixed(1)} ms | ` +
        `${floorC1.stats.p50.toFixed(0)} ms | ${trip.stats.p50.toFixed(0)} ms | ${single.stats.throughput.toFixed(1)}/s | ${jsreportBest.toFixed(1)}/s | ` +
        `${floorCard.stats.throughput.toFixed(1)}/s | ${cards.stats.throughput.toFixed(1)}/s |`;
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
  return [
    `Invoice (1 page) and social card; ${count} invoices per burst (half as many for c=1, the social card and jsreport), ${rounds} rounds. ` +
      "Each round: the floor at c=2, Pressroom with one key at c=4, the floor at c=2 again, Pressroom with eight keys in rotation at c=4, " +
      "the floor at c=1, Pressroom's one trip at c=1, the floor's social card at c=2, Pressroom's at c=4, jsreport at c=2 and c=4. " +
      "The floor's CPU per invoice is the mean of the round's two floor bursts, its Chromium's and its driver's, without its process start and launch. " +
      "Render pod: the render worker and its Chromium. Whole machine: the six services, NATS, PostgreSQL and the bench client.",
    "",
    "| round | floor CPU per invoice | render pod, one key | render pod, eight keys | whole machine, one key | floor p50 c=1 | one trip p50 c=1 | Pressroom c=4 | jsreport best | floor card c=2 | Pressroom card c=4 |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...lines,
    "",
    "| target | each round | median | bound | verdict |",
    "|---|---|---|---|---|",
    ...(Object.keys(TARGETS) as Target[]).map((target) => {
      const { label, bound, atMost } = TARGETS[target];
      const m = median(ratios[target]);
      return `| ${label} | ${ratios[target].map((r) => r.toFixed(2)).join(", ")} | **${m.toFixed(2)}** | ${atMost ? "≤" : "≥"} ${bound} | ${verdict(target, m)} |`;
    }),
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
    `with ${renderers(stack)} Chromium renderers (the windows kept: free fresh ones and the keys' own), ${treeRssMiB(pid).toFixed(0)} MiB (PSS) for the worker and its Chromium.`
  );
}

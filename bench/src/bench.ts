import { execFileSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { connectNats, createLogger } from "@pressroom/platform";
import { DEFAULT_CHROMIUM_PATH } from "@pressroom/render/engine";
import { REPO_ROOT, startTestStack, type TestStack } from "@pressroom/stack";
import { admission } from "./admission";
import { batchBench } from "./batch";
import { compareChart } from "./chart";
import { cpu } from "./cpu";
import { chromiumBench } from "./chromium";
import { efficiency } from "./efficiency";
import { engineBench } from "./engine";
import { postprocessBench } from "./postprocess";
import { profile } from "./profile";
import { jobTimeline, stages } from "./stages";
import { benchDocuments, type BenchDocument } from "./documents";
import { Floor } from "./floor";
import { JsreportPeer } from "./jsreport";
import { memory } from "./memory";
import { benchKeys, renderThroughPressroom, runPressroom } from "./pressroom";
import { wipeCallsBench } from "./wipe-calls";
import { pullsBench } from "./pulls";
import type { RunStats } from "./stats";

const CHROMIUM = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;
const CONCURRENCY = [1, 2, 4];
const SCALE = Number(process.env.BENCH_SCALE ?? "1");

function machine(): string {
  const chromium = execFileSync(CHROMIUM, ["--version"], { encoding: "utf8" }).trim();
  return `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${chromium}`;
}

function countFor(doc: BenchDocument): number {
  return Math.max(8, Math.round((doc.templateId === "report" ? 16 : 60) * SCALE));
}

/** The commit the numbers come from, and whether the tree had changes on top of it (besides what the bench itself writes). */
function revision(): string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: REPO_ROOT, encoding: "utf8" }).trim();
  const changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/RESULTS.md", ":!bench/compare.svg", ":!bench/memory.svg") !== "";
  return `commit ${git("rev-parse", "--short", "HEAD")}${changed ? " with uncommitted changes" : ""}`;
}

const ms = (value: number) => `${value.toFixed(0)} ms`;
const rate = (value: number) => `${value.toFixed(1)}/s`;

/** The compare run as a chart, shown by its section of RESULTS.md. */
const COMPARE_SVG = path.join(REPO_ROOT, "bench", "compare.svg");

interface Row {
  doc: string;
  concurrency: number;
  floor: RunStats;
  /** POST, then the download: two round trips. */
  pressroom: RunStats;
  /** POST with Accept: the document in the answer. */
  oneTrip: RunStats;
  /** jsreport's HTTP API, on the same Chromium. */
  jsreport: RunStats;
}

async function startBenchStack(slots: number): Promise<{ stack: TestStack; keys: string[] }> {
  const stack = await startTestStack({ env: { LOG_LEVEL: "warn", RENDER_SLOTS: String(slots) } });
  return { stack, keys: await benchKeys(stack, 4) };
}

/** The floor and Pressroom, side by side in one run, on the same documents. */
async function compare(): Promise<string> {
  const docs = benchDocuments();
  const rows: Row[] = [];
  const { stack, keys } = await startBenchStack(4);
  try {
    for (const doc of docs) {
      for (const concurrency of CONCURRENCY) {
        const floor = await Floor.start(CHROMIUM, concurrency);
        const floorStats = await floor.run(doc, concurrency, countFor(doc)).finally(() => floor.close());
        // Like the floor, jsreport runs only while it is measured: its idle pool would weigh on the others.
        const peer = await JsreportPeer.start(CHROMIUM, concurrency);
        const jsreportStats = await peer.run(doc, concurrency, countFor(doc)).finally(() => peer.close());
        const pressroomStats = await runPressroom(stack.baseUrl, keys, doc, concurrency, countFor(doc));
        const oneTripStats = await runPressroom(stack.baseUrl, keys, doc, concurrency, countFor(doc), true);
        rows.push({ doc: doc.name, concurrency, floor: floorStats, pressroom: pressroomStats, oneTrip: oneTripStats, jsreport: jsreportStats });
        process.stdout.write(
          `${doc.name.padEnd(28)} c=${concurrency}  floor p50 ${ms(floorStats.p50)} p99 ${ms(floorStats.p99)} ${rate(floorStats.throughput)}   ` +
            `pressroom p50 ${ms(pressroomStats.p50)} p99 ${ms(pressroomStats.p99)} ${rate(pressroomStats.throughput)}   ` +
            `one trip p50 ${ms(oneTripStats.p50)} ${rate(oneTripStats.throughput)}   jsreport p50 ${ms(jsreportStats.p50)} ${rate(jsreportStats.throughput)}\n`,
        );
      }
    }
  } finally {
    await stack.stop();
  }
  writeFileSync(COMPARE_SVG, compareChart(rows, `npm run bench -- compare on ${revision()}, ${machine()}`));
  const lines = [
    "![Latency p50 and p99 and throughput by concurrency, the Chromium floor and Pressroom](compare.svg)",
    "",
    "Pressroom: POST, then the download of its URL. One trip: POST with `Accept: application/pdf` (or `image/png`), the document in the answer. " +
      "jsreport: 4.7.1 with chrome-pdf / chrome-image, one Chromium per concurrent request (a worker thread each, a new page per render), " +
      "on the same binary with the floor's flags, through its HTTP API (`POST /api/report`), given the already expanded HTML (engine `none`), so it does no templating where Pressroom does.",
    "",
    "| document | concurrency | floor p50 | floor p99 | floor throughput | Pressroom p50 | Pressroom p99 | Pressroom throughput | one trip p50 | one trip throughput | jsreport p50 | jsreport throughput | p50 ratio | throughput ratio |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.doc} | ${r.concurrency} | ${ms(r.floor.p50)} | ${ms(r.floor.p99)} | ${rate(r.floor.throughput)} | ${ms(r.pressroom.p50)} | ${ms(r.pressroom.p99)} | ${rate(r.pressroom.throughput)} | ` +
        `${ms(r.oneTrip.p50)} | ${rate(r.oneTrip.throughput)} | ${ms(r.jsreport.p50)} | ${rate(r.jsreport.throughput)} | ` +
        `${(r.pressroom.p50 / r.floor.p50).toFixed(2)} | ${(r.pressroom.throughput / r.floor.throughput).toFixed(2)} |`,
    ),
    "",
    "Targets (same run): p50 at concurrency 1 ≤ 1.6 × floor p50 (one trip ≤ 1.3 ×); throughput at concurrency 4 ≥ 0.65 × the floor's best throughput " +
      "and ≥ 2.5 × jsreport's best.",
    "",
    "| document | p50 ratio at c=1 | target ≤ 1.6 | one trip p50 ratio at c=1 | target ≤ 1.3 | c=4 throughput / floor's best | target ≥ 0.65 | c=4 throughput / jsreport's best | target ≥ 2.5 |",
    "|---|---|---|---|---|---|---|---|---|",
    ...docs.map((doc) => {
      const mine = rows.filter((r) => r.doc === doc.name);
      const c1 = mine.find((r) => r.concurrency === 1)!;
      const c4 = mine.find((r) => r.concurrency === 4)!;
      const best = Math.max(...mine.map((r) => r.floor.throughput));
      const peerBest = Math.max(...mine.map((r) => r.jsreport.throughput));
      const p50Ratio = c1.pressroom.p50 / c1.floor.p50;
      const oneTripRatio = c1.oneTrip.p50 / c1.floor.p50;
      const tpRatio = c4.pressroom.throughput / best;
      const peerRatio = c4.pressroom.throughput / peerBest;
      const verdict = (met: boolean) => (met ? "met" : "missed");
      return `| ${doc.name} | ${p50Ratio.toFixed(2)} | ${verdict(p50Ratio <= 1.6)} | ${oneTripRatio.toFixed(2)} | ${verdict(oneTripRatio <= 1.3)} | ${tpRatio.toFixed(2)} | ${verdict(tpRatio >= 0.65)} | ${peerRatio.toFixed(2)} | ${verdict(peerRatio >= 2.5)} |`;
    }),
  ];
  return lines.join("\n");
}

/** How soon a render worker is ready, and whether its first render is a cold one. */
async function startup(): Promise<string> {
  const docs = benchDocuments();
  const invoice = docs[0]!;
  const { stack, keys } = await startBenchStack(2);
  const nc = await connectNats({ url: stack.natsUrl, name: "bench-startup", logger: createLogger("bench", "silent") });
  try {
    const jsm = await nc.jetstreamManager();
    /** The worker's share of a job: job.started → job.succeeded, from the job's events. */
    const workerMs = async (jobId: string) => {
      const { started, succeeded } = await jobTimeline(jsm, jobId);
      return succeeded - started;
    };
    const results: string[] = [];
    for (let round = 0; round < 3; round++) {
      await stack.services.kill("render");
      const t0 = performance.now();
      await stack.services.restart("render");
      const readyMs = performance.now() - t0;
      const t1 = performance.now();
      const firstJob = await renderThroughPressroom(stack.baseUrl, keys[0]!, invoice);
      const first = performance.now() - t1;
      const firstWorker = await workerMs(firstJob);
      const later: number[] = [];
      const laterWorker: number[] = [];
      for (let i = 0; i < 10; i++) {
        const t = performance.now();
        const job = await renderThroughPressroom(stack.baseUrl, keys[i % keys.length]!, invoice);
        later.push(performance.now() - t);
        laterWorker.push(await workerMs(job));
      }
      later.sort((a, b) => a - b);
      laterWorker.sort((a, b) => a - b);
      results.push(`| ${round + 1} | ${ms(readyMs)} | ${ms(first)} (${ms(firstWorker)}) | ${ms(later[5]!)} (${ms(laterWorker[5]!)}) |`);
      process.stdout.write(
        `startup round ${round + 1}: ready in ${ms(readyMs)}, first render ${ms(first)} (worker ${ms(firstWorker)}), then p50 ${ms(later[5]!)} (worker ${ms(laterWorker[5]!)})\n`,
      );
    }
    return [
      "| round | process start → ready | first render, end to end (in the worker) | next 10, p50 (in the worker) |",
      "|---|---|---|---|",
      ...results,
    ].join("\n");
  } finally {
    await nc.close();
    await stack.stop();
  }
}

const RESULTS = path.join(REPO_ROOT, "bench", "RESULTS.md");

/** Replaces this mode's section of bench/RESULTS.md (between its markers) with the new numbers. */
function writeResults(mode: string, section: string): void {
  const start = `<!-- bench:${mode}:start -->`;
  const end = `<!-- bench:${mode}:end -->`;
  const current = existsSync(RESULTS) ? readFileSync(RESULTS, "utf8") : "# Benchmark results\n";
  const block = `${start}\n${section}${end}`;
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next =
    from >= 0 && to > from ? `${current.slice(0, from)}${block}${current.slice(to + end.length)}` : `${current.trimEnd()}\n\n## ${mode}\n\n${block}\n`;
  writeFileSync(RESULTS, next);
}

async function main(): Promise<void> {
  const mode = process.argv[2] ?? "compare";
  // The code the run measures is what was checked out when it began (commits made meanwhile are not in it).
  const measured = revision();
  const modes: Record<string, () => Promise<string>> = {
    compare,
    startup,
    memory: () => memory(Math.max(400, Math.round(10_000 * SCALE)), () => `npm run bench -- memory on ${measured}, ${machine()}`),
    stages: () => stages(CHROMIUM, Math.max(10, Math.round(40 * SCALE))),
    admission: () => admission(Math.round(3000 * SCALE)),
    batch: () => batchBench(Math.max(20, Math.round(1000 * SCALE)), 3, [4, 10]),
    cpu: () => cpu(Math.max(20, Math.round(120 * SCALE))),
    profile: () => profile(Math.max(20, Math.round(200 * SCALE))),
    engine: () => engineBench(CHROMIUM, benchDocuments()[0]!, Math.max(20, Math.round(150 * SCALE)), CONCURRENCY),
    postprocess: () => postprocessBench(CHROMIUM, benchDocuments()[0]!, Math.max(5, Math.round(30 * SCALE))),
    efficiency: () => efficiency(CHROMIUM, 3, Math.max(20, Math.round(80 * SCALE))),
    "wipe-calls": () => wipeCallsBench(CHROMIUM, benchDocuments()[0]!, 5),
    pulls: () => pullsBench(7),
    chromium: () => chromiumBench(CHROMIUM, benchDocuments()[0]!, Math.max(6, Math.round(20 * SCALE)), CONCURRENCY),
  };
  const run = modes[mode];
  if (!run) throw new Error(`unknown mode ${mode}; use ${Object.keys(modes).join(", ")}`);
  const table = await run();
  const section = `Machine: ${machine()}. Run: ${new Date().toISOString()}, \`npm run bench -- ${mode}\`${SCALE !== 1 ? ` with BENCH_SCALE=${SCALE}` : ""} on ${measured}.\n\n${table}\n`;
  writeResults(mode, section);
  process.stdout.write(`\n${table}\n\nwritten to bench/RESULTS.md (section ${mode})\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

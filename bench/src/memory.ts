import { writeFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT, descendantsOf, startTestStack } from "@pressroom/stack";
import { memoryChart, type MemoryPoint } from "./chart";
import { benchDocuments } from "./documents";
import { benchKeys, renderThroughPressroom } from "./pressroom";
import { allProcStats, chromiumType, memoryOf, type Memory } from "./proc";
import { median, runTasks, slope } from "./stats";

/** The memory run as a chart, shown by its section of RESULTS.md. */
const MEMORY_SVG = path.join(REPO_ROOT, "bench", "memory.svg");

const KEYS = 8;
const CONCURRENCY = 4;
/** Samples after the start: one every total / SAMPLES renders. */
const SAMPLES = 40;
/** After each batch, before its sample: the last jobs' windows are reset after their answers, and a recycled browser closes. */
const SETTLE_MS = 2_000;

interface MemorySample extends MemoryPoint {
  /** Seconds since the first render. */
  seconds: number;
  /** The post-processing process the worker starts (its process group's other member). */
  postprocess: Memory;
  /** Chromium's renderer processes (one per window), summed. */
  renderersMemory: Memory;
  /** Chromium's browser processes (the worker's children outside its process group): two while one is replaced. */
  browsers: number[];
}

const add = (a: Memory, b: Memory): Memory => ({ rssMiB: a.rssMiB + b.rssMiB, pssMiB: a.pssMiB + b.pssMiB });
const NONE: Memory = { rssMiB: 0, pssMiB: 0 };

/**
 * The render pod's memory now, its processes looked up afresh (a recycled browser is a new
 * process group): the worker's process, the other members of its process group (the
 * post-processing process), and every other descendant (Chromium: its browser, zygotes,
 * renderers and utility processes, each browser its own process group).
 */
function sample(root: number, renders: number, seconds: number): MemorySample {
  const all = allProcStats();
  const own = all.find((p) => p.pid === root)?.pgid;
  const descendants = new Set(descendantsOf(root));
  const chromium = all.filter((p) => descendants.has(p.pid) && p.pgid !== own);
  const postprocess = all.filter((p) => descendants.has(p.pid) && p.pgid === own);
  const renderers = chromium.filter((p) => chromiumType(p.pid) === "renderer");
  return {
    renders,
    seconds,
    worker: memoryOf(root),
    postprocess: postprocess.map((p) => memoryOf(p.pid)).reduce(add, NONE),
    chromium: chromium.map((p) => memoryOf(p.pid)).reduce(add, NONE),
    chromiumProcesses: chromium.length,
    renderers: renderers.length,
    renderersMemory: renderers.map((p) => memoryOf(p.pid)).reduce(add, NONE),
    browsers: chromium.filter((p) => p.ppid === root).map((p) => p.pid),
  };
}

/** The renders at which a browser not seen in the sample before appeared. */
function recyclesIn(samples: MemorySample[]): number[] {
  return samples.slice(1).flatMap((s, i) => (s.browsers.some((pid) => !samples[i]!.browsers.includes(pid)) ? [s.renders] : []));
}

/** Each browser seen alone in a sample, with its samples (a sample that saw two is left out: one was closing). */
function browserLives(samples: MemorySample[]): { pid: number; samples: MemorySample[] }[] {
  const lives = new Map<number, MemorySample[]>();
  for (const s of samples) if (s.browsers.length === 1) lives.set(s.browsers[0]!, [...(lives.get(s.browsers[0]!) ?? []), s]);
  return [...lives].map(([pid, mine]) => ({ pid, samples: mine }));
}

const mib = (value: number) => `${value.toFixed(0)} MiB`;
const signed = (value: number, digits: number) => `${value >= 0 ? "+" : "−"}${Math.abs(value).toFixed(digits)}`;
const thousands = (renders: number) => renders.toLocaleString("en-US");
const perRenderer = (s: MemorySample) => s.renderersMemory.pssMiB / Math.max(1, s.renderers);

/**
 * Issue 43's memory at length: `count` renders of the invoice (rounded to a multiple of 40) through
 * the whole stack (POST and download, RENDER_SLOTS=4, eight business keys in rotation, concurrency
 * 4), in 40 batches; at the start and after each batch and a pause (nothing in flight), the RSS and
 * PSS of the render worker, of its post-processing process and of its Chromium (every process,
 * summed; its renderers also apart), and Chromium's process and renderer counts. The rule: the
 * first fifth of the renders is the warm-up (at 10,000, the first browser's 2,000); the growth is
 * the median of the last quarter's samples after it less the median of the first quarter's (each
 * quarter half-open, so at 10,000 each is one browser's whole life, from its launch), and the slope
 * is the least-squares one over the samples of the four quarters. `caption` names the run in the chart.
 */
export async function memory(count: number, caption: () => string): Promise<string> {
  const step = Math.max(1, Math.round(count / SAMPLES));
  const total = step * SAMPLES;
  const warmup = total / 5;
  const invoice = benchDocuments()[0]!;
  const stack = await startTestStack({ env: { LOG_LEVEL: "warn", RENDER_SLOTS: String(CONCURRENCY) } });
  const samples: MemorySample[] = [];
  try {
    const keys = await benchKeys(stack, KEYS);
    const root = stack.services.processes.get("render")!.child.pid!;
    const started = performance.now();
    const take = (renders: number) => {
      const s = sample(root, renders, (performance.now() - started) / 1000);
      samples.push(s);
      process.stdout.write(
        `render ${renders}: worker RSS ${mib(s.worker.rssMiB)} PSS ${mib(s.worker.pssMiB)}, Chromium RSS ${mib(s.chromium.rssMiB)} PSS ${mib(s.chromium.pssMiB)} ` +
          `in ${s.chromiumProcesses} processes, ${s.renderers} renderers ${mib(s.renderersMemory.pssMiB)} (browser ${s.browsers.join(", ")}), ` +
          `post-processing PSS ${mib(s.postprocess.pssMiB)} (${s.seconds.toFixed(0)} s)\n`,
      );
    };
    take(0);
    let next = 0;
    for (let done = step; done <= total; done += step) {
      await runTasks(
        CONCURRENCY,
        step,
        () => renderThroughPressroom(stack.baseUrl, keys[next++ % KEYS]!, invoice),
        () => undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      take(done);
    }
  } finally {
    await stack.stop();
  }
  const recycles = recyclesIn(samples);
  writeFileSync(MEMORY_SVG, memoryChart(samples, warmup, recycles, caption()));
  const quarter = (total - warmup) / 4;
  const within = (from: number, to: number) => samples.filter((s) => s.renders >= from && s.renders < to);
  const after = within(warmup, total);
  const first = within(warmup, warmup + quarter);
  const last = within(total - quarter, total);
  const measures: [string, (s: MemorySample) => number][] = [
    ["render worker (Node), PSS", (s) => s.worker.pssMiB],
    ["render worker (Node), RSS", (s) => s.worker.rssMiB],
    ["Chromium, PSS (all its processes)", (s) => s.chromium.pssMiB],
    ["Chromium, RSS summed over its processes", (s) => s.chromium.rssMiB],
    ["Chromium's renderers, PSS per renderer", perRenderer],
    ["post-processing process, PSS", (s) => s.postprocess.pssMiB],
    ["render pod (the three), PSS", (s) => s.worker.pssMiB + s.chromium.pssMiB + s.postprocess.pssMiB],
  ];
  const at = (renders: number) => samples.find((s) => s.renders === renders)!;
  const growthRows = measures.map(([label, of]) => {
    const from = median(first.map(of));
    const to = median(last.map(of));
    const perThousand = slope(
      after.map((s) => s.renders / 1000),
      after.map(of),
    );
    const line = `| ${label} | ${mib(of(at(warmup)))} | ${mib(of(at(total)))} | ${mib(from)} | ${mib(to)} | ${signed(to - from, 1)} MiB (${signed(((to - from) / from) * 100, 1)} %) | ${signed(perThousand, 2)} MiB |`;
    process.stdout.write(`${line}\n`);
    return line;
  });
  const lifeRows = browserLives(samples).map(({ pid, samples: mine }) => {
    const chromium = mine.map((s) => s.chromium.pssMiB);
    return (
      `| ${pid} | ${thousands(mine[0]!.renders)} to ${thousands(mine.at(-1)!.renders)} (${mine.length}) | ${mib(chromium[0]!)} | ${mib(median(chromium))} | ${mib(Math.max(...chromium))} | ` +
      `${Math.max(...mine.map((s) => s.chromiumProcesses))} | ${Math.max(...mine.map((s) => s.renderers))} | ${mib(median(mine.map(perRenderer)))} | ${mib(median(mine.map((s) => s.worker.pssMiB)))} |`
    );
  });
  const seconds = samples.at(-1)!.seconds;
  return [
    `The invoice (1 page, 20 items), ${thousands(total)} renders through the whole stack (POST, then the download, checked), eight business keys in rotation, concurrency 4, RENDER_SLOTS=4, ` +
      `the other render settings the service's defaults (RENDER_KEY_WINDOWS 8, a new browser every 2,000 renders). In ${(seconds / 60).toFixed(1)} minutes (${(total / seconds).toFixed(1)} renders/s, the pauses included). ` +
      `A sample at the start and after each ${thousands(step)} renders, ${SETTLE_MS / 1000} s after the batch ended (nothing in flight), the processes looked up afresh each time: ` +
      "the render worker's Node process; the post-processing process it starts (in its process group); Chromium, every other process under the worker (browser, zygotes, renderers, utility processes), summed. " +
      "PSS divides shared pages among their sharers; RSS counts them in each, so Chromium's summed RSS counts its shared pages once per process.",
    "",
    "![RSS and PSS of the render worker and its Chromium, and Chromium's process and renderer counts, by renders done](memory.svg)",
    "",
    `Rule: the first ${thousands(warmup)} renders are the warm-up. Growth: the median of the samples from render ${thousands(total - quarter)} up to but not including ${thousands(total)} (the last quarter after the warm-up) ` +
      `less the median of those from render ${thousands(warmup)} up to ${thousands(warmup + quarter)} (the first quarter). Slope: least squares over the ${after.length} samples from render ${thousands(warmup)} up to ${thousands(total)}. ` +
      `New browsers seen (a browser pid not in the sample before): ${recycles.length > 0 ? `at the samples of render ${recycles.map(thousands).join(", ")}` : "none"}.`,
    "",
    `| measure | render ${thousands(warmup)} | render ${thousands(total)} | first quarter's median | last quarter's median | growth | slope per 1,000 renders |`,
    "|---|---:|---:|---:|---:|---:|---:|",
    ...growthRows,
    "",
    "Each browser's life (the samples that saw it alone):",
    "",
    "| browser pid | samples (renders) | Chromium PSS at the first | median | highest | Chromium processes, most | renderers, most | PSS per renderer, median | worker PSS, median |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ...lifeRows,
    "",
    "| renders | worker RSS | worker PSS | Chromium RSS (summed) | Chromium PSS | Chromium processes | renderers | renderers' PSS | browser pid | post-processing PSS | time |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ...samples.map(
      (s) =>
        `| ${thousands(s.renders)} | ${mib(s.worker.rssMiB)} | ${mib(s.worker.pssMiB)} | ${mib(s.chromium.rssMiB)} | ${mib(s.chromium.pssMiB)} | ${s.chromiumProcesses} | ${s.renderers} | ` +
        `${mib(s.renderersMemory.pssMiB)} | ${s.browsers.join(", ")} | ${mib(s.postprocess.pssMiB)} | ${s.seconds.toFixed(0)} s |`,
    ),
  ].join("\n");
}

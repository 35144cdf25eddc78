import { RenderEngine, type EngineStats } from "@pressroom/render/engine";
import type { BenchDocument } from "./documents";
import { Floor } from "./floor";
import { FreshContexts } from "./fresh-contexts";
import { allProcStats } from "./proc";
import { runTasks, summarise, type RunStats } from "./stats";

/**
 * CPU time of a browser's process group, exited members included (a fresh
 * context's renderer is reaped by the zygote): unlike wall-clock numbers, it
 * does not depend on other load on the machine.
 */
export function groupCpuMs(pgid: number | undefined): number {
  if (!pgid) return 0;
  return allProcStats()
    .filter((p) => p.pgid === pgid)
    .reduce((total, p) => total + p.cpuMs, 0);
}

interface Variant {
  name: string;
  once(worker: number): Promise<unknown>;
  /** Waits for the background work a burst leaves (wipes, contexts prepared ahead): it is part of the burst's cost. */
  settle(): Promise<void>;
  pid(): number | undefined;
  close(): Promise<void>;
  latencies: number[];
  wallMs: number;
  cpuMs: number;
}

const variant = (fields: Omit<Variant, "latencies" | "wallMs" | "cpuMs">): Variant => ({ ...fields, latencies: [], wallMs: 0, cpuMs: 0 });

async function burst(v: Variant, concurrency: number, count: number, record: boolean): Promise<void> {
  const cpu0 = groupCpuMs(v.pid());
  const node0 = process.cpuUsage();
  const t0 = performance.now();
  await runTasks(
    concurrency,
    count,
    (worker) => v.once(worker),
    (ms) => {
      if (record) v.latencies.push(ms);
    },
  );
  await v.settle();
  if (!record) return;
  v.wallMs += performance.now() - t0;
  const node = process.cpuUsage(node0);
  v.cpuMs += groupCpuMs(v.pid()) - cpu0 + (node.user + node.system) / 1000;
}

/** The engine, or the bench's variant of it built from its pieces. */
type Renderer = Pick<RenderEngine, "render" | "close"> & { stats(): Pick<EngineStats, "preparing" | "browserPid"> };

function engineVariant(name: string, renderer: Renderer, doc: BenchDocument): Variant {
  const job = doc.job;
  return variant({
    name,
    once: () => renderer.render(job),
    settle: async () => {
      while (renderer.stats().preparing > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    },
    pid: () => renderer.stats().browserPid,
    close: () => renderer.close(),
  });
}

/**
 * The render engine alone (no service around it) against the floor and against
 * a fresh browser context per render (FreshContexts), at each concurrency. The variants of one level run
 * in alternating short bursts, so load from elsewhere on the machine falls
 * on all of them alike. CPU is Chromium's and this process's, per render.
 */
export async function engineBench(executablePath: string, doc: BenchDocument, renders: number, levels: number[]): Promise<string> {
  const rows: string[] = [];
  for (const concurrency of levels) {
    const floor = await Floor.start(executablePath, concurrency);
    const variants = [
      variant({
        name: "floor",
        once: (worker) => floor.renderOn(worker, doc),
        settle: async () => undefined,
        pid: () => floor.pid(),
        close: () => floor.close(),
      }),
      engineVariant("engine, reuse", await RenderEngine.start({ executablePath, slots: concurrency }), doc),
      engineVariant("engine, fresh", await FreshContexts.start(executablePath, concurrency), doc),
    ];
    try {
      for (const v of variants) await burst(v, concurrency, 2 * concurrency, false);
      const perBurst = Math.max(concurrency * 5, 10);
      for (let done = 0; done < renders; done += perBurst) {
        for (const v of variants) await burst(v, concurrency, Math.min(perBurst, renders - done), true);
      }
    } finally {
      await Promise.all(variants.map((v) => v.close()));
    }
    for (const v of variants) {
      const stats: RunStats = summarise(v.latencies, v.wallMs);
      const line = `| ${v.name} | ${concurrency} | ${stats.p50.toFixed(0)} ms | ${stats.p99.toFixed(0)} ms | ${stats.throughput.toFixed(1)}/s | ${(v.cpuMs / stats.count).toFixed(0)} ms |`;
      rows.push(line);
      process.stdout.write(`${line}\n`);
    }
  }
  return [
    `${doc.name}, ${renders} renders per row.`,
    "",
    "| variant | concurrency | p50 | p99 | throughput | CPU per render |",
    "|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

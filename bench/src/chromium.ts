import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { RenderEngine, type RenderJob } from "@pressroom/render/engine";
import { descendantsOf, freePort, REPO_ROOT, stopChild, waitFor } from "@pressroom/stack";
import type { BenchDocument } from "./documents";
import { groupCpuMs } from "./engine";
import { median } from "./stats";

interface Side {
  name: string;
  engine: RenderEngine;
  /** The process group of the Chromium it drives. */
  pgid(): number | undefined;
}

/** One burst's cost per render: wall time and CPU (Chromium's process group and this process). */
async function burst(side: Side, job: RenderJob, concurrency: number, count: number): Promise<{ wallMs: number; cpuMs: number }> {
  let issued = 0;
  const cpu0 = groupCpuMs(side.pgid());
  const node0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (issued < count) {
        issued++;
        await side.engine.render(job);
      }
    }),
  );
  while (side.engine.stats().preparing > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const wallMs = performance.now() - t0;
  const node = process.cpuUsage(node0);
  return { wallMs: wallMs / count, cpuMs: (groupCpuMs(side.pgid()) - cpu0 + (node.user + node.system) / 1000) / count };
}

/** Chromium run on its own by the render image's dist/chromium-main.js, as the chart's Chromium container runs it. */
async function startHost(executablePath: string): Promise<{ url: string; host: ChildProcess; pgid(): number | undefined }> {
  const port = await freePort();
  const host = spawn(process.execPath, [path.join(REPO_ROOT, "services", "render", "dist", "chromium-main.js")], {
    env: { PATH: process.env.PATH, LOG_LEVEL: "warn", CHROMIUM_PATH: executablePath, RENDER_CHROMIUM_PORT: String(port) },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor("chromium-main's DevTools endpoint", async () => (await fetch(`${url}/json/version`).catch(() => undefined))?.ok === true, 30_000);
  // chromium-main starts Chromium as the leader of its own process group.
  return { url, host, pgid: () => descendantsOf(host.pid!)[0] };
}

/**
 * The cost of driving Chromium in a container of its own (issue 30): the engine
 * connected to a Chromium run by chromium-main.js over its DevTools WebSocket on
 * loopback, against the engine that launched its own over a pipe. Both are up and
 * warm before anything is measured (process start and browser launch left out);
 * they run alternating bursts, the first one alternating too, and the table gives
 * the median over rounds of each round's connect/launch ratio, with each side's
 * median per render.
 */
export async function chromiumBench(executablePath: string, doc: BenchDocument, rounds: number, levels: number[]): Promise<string> {
  const job = doc.job;
  const rows: string[] = [];
  for (const concurrency of levels) {
    const host = await startHost(executablePath);
    const launched = await RenderEngine.start({ executablePath, slots: concurrency });
    const connected = await RenderEngine.start({ executablePath, slots: concurrency, connectUrl: host.url });
    const sides: Side[] = [
      { name: "launch, pipe", engine: launched, pgid: () => launched.stats().browserPid },
      { name: "connect, loopback", engine: connected, pgid: host.pgid },
    ];
    const perBurst = Math.max(concurrency * 5, 10);
    const results = sides.map(() => [] as { wallMs: number; cpuMs: number }[]);
    try {
      for (const side of sides) await burst(side, job, concurrency, 2 * concurrency);
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? [0, 1] : [1, 0];
        for (const i of order) results[i]!.push(await burst(sides[i]!, job, concurrency, perBurst));
      }
    } finally {
      await Promise.all([launched.close(), connected.close()]);
      await stopChild(host.host, "SIGTERM", 5_000);
    }
    const [pipe, loopback] = results as [{ wallMs: number; cpuMs: number }[], { wallMs: number; cpuMs: number }[]];
    const ratio = (key: "wallMs" | "cpuMs") => median(pipe.map((p, i) => loopback[i]![key] / p[key]));
    const line = `| ${concurrency} | ${median(pipe.map((p) => p.wallMs)).toFixed(1)} ms | ${median(loopback.map((p) => p.wallMs)).toFixed(1)} ms | ${ratio("wallMs").toFixed(3)} | ${median(pipe.map((p) => p.cpuMs)).toFixed(1)} ms | ${median(loopback.map((p) => p.cpuMs)).toFixed(1)} ms | ${ratio("cpuMs").toFixed(3)} |`;
    rows.push(line);
    process.stdout.write(`${line}\n`);
  }
  return [
    `${doc.name}; ${rounds} rounds per concurrency, each a burst of max(5 × concurrency, 10) renders on each side, alternating.`,
    "Wall and CPU are per render (CPU: Chromium's process group and the bench's Node process, which drives both engines); ratios are connect / launch, the median of each round's.",
    "",
    "| concurrency | wall, launch (pipe) | wall, connect (loopback) | wall ratio | CPU, launch | CPU, connect | CPU ratio |",
    "|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism } from "node:os";
import { startTestStack } from "@pressroom/stack";
import { benchDocuments, type BenchDocument } from "./documents";
import { benchKeys, runPressroom } from "./pressroom";
import { allProcStats, type ProcStat } from "./proc";

/**
 * CPU ms so far per process and its group: each service's process, its other
 * descendants by name (render's Chromium), nats-server, PostgreSQL, this process.
 */
function sample(roots: Map<string, number>): Map<number, { group: string; cpuMs: number }> {
  const all = allProcStats();
  const children = new Map<number, ProcStat[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const claimed = new Map<number, { group: string; cpuMs: number }>();
  const add = (group: string, p: ProcStat) => claimed.set(p.pid, { group, cpuMs: p.cpuMs });
  for (const p of all) {
    if (p.comm === "nats-server") add("nats-server", p);
    else if (p.comm.startsWith("postgres")) add("postgres", p);
  }
  for (const [name, root] of roots) {
    const stack = all.filter((p) => p.pid === root);
    while (stack.length) {
      const p = stack.pop()!;
      if (claimed.has(p.pid)) continue;
      add(p.pid === root || p.comm === "node" ? name : `${name}: ${p.comm.replace(/[^a-z].*$/, "")}`, p);
      stack.push(...(children.get(p.pid) ?? []));
    }
  }
  return claimed;
}

/**
 * CPU ms spent per group between two samples: each group's sum after less its sum before. A process
 * that ended in between is counted through the parent that reaped it (ProcStat.cpuMs), when that
 * parent is in the group; one that started is counted in full.
 */
function spent(before: ReturnType<typeof sample>, after: ReturnType<typeof sample>): Map<string, number> {
  const totals = new Map<string, number>();
  for (const { group, cpuMs } of after.values()) totals.set(group, (totals.get(group) ?? 0) + cpuMs);
  for (const { group, cpuMs } of before.values()) totals.set(group, (totals.get(group) ?? 0) - cpuMs);
  return totals;
}

/** The six services' own processes: "Node CPU per document" counts these (render's Chromium aside). */
const NODE_SERVICES = ["gateway", "identity", "metering", "render", "storage", "webhook"];

interface CpuRow {
  doc: string;
  throughput: number;
  /** CPU ms per request by process group. */
  per: [string, number][];
}

const nodeMs = (row: CpuRow) => row.per.filter(([name]) => NODE_SERVICES.includes(name)).reduce((s, [, v]) => s + v, 0);
const totalMs = (row: CpuRow) => row.per.reduce((s, [, v]) => s + v, 0);

/** An OTLP/HTTP endpoint that accepts every export and keeps nothing: what tracing costs the services, not a collector. */
async function discardingCollector(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/x-protobuf" }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** How long the idle stack is watched. */
const IDLE_MS = 10_000;

/** Each group's CPU ms divided by `per` (requests, or seconds), largest first. */
const divided = (totals: Map<string, number>, per: number): [string, number][] =>
  [...totals].map(([name, ms]) => [name, ms / per] as [string, number]).sort((a, b) => b[1] - a[1]);

/**
 * CPU per request for each document, on a fresh stack started with `env`;
 * with `watchIdle`, first the stack's CPU per second with no requests.
 */
async function measure(
  env: Record<string, string>,
  docs: BenchDocument[],
  count: number,
  concurrency: number,
  watchIdle = false,
): Promise<{ rows: CpuRow[]; idle: [string, number][] }> {
  const stack = await startTestStack({ env: { LOG_LEVEL: "warn", RENDER_SLOTS: String(concurrency), ...env } });
  try {
    const keys = await benchKeys(stack, concurrency);
    const roots = new Map<string, number>([...stack.services.processes].map(([name, p]) => [name, p.child.pid!]));
    roots.set("bench client", process.pid);
    let idle: [string, number][] = [];
    if (watchIdle) {
      await runPressroom(stack.baseUrl, keys, docs[0]!, concurrency, concurrency * 3);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const before = sample(roots);
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      idle = divided(spent(before, sample(roots)), IDLE_MS / 1000);
    }
    const rows: CpuRow[] = [];
    for (const doc of docs) {
      await runPressroom(stack.baseUrl, keys, doc, concurrency, concurrency * 3);
      const before = sample(roots);
      const stats = await runPressroom(stack.baseUrl, keys, doc, concurrency, count);
      rows.push({ doc: doc.name, throughput: stats.throughput, per: divided(spent(before, sample(roots)), stats.count) });
      process.stdout.write(`${line(rows.at(-1)!)}\n`);
    }
    return { rows, idle };
  } finally {
    await stack.stop();
  }
}

const line = (row: CpuRow) =>
  `${row.doc}: ${row.throughput.toFixed(1)}/s, ${totalMs(row).toFixed(0)} ms CPU per request, the six services' Node processes ${nodeMs(row).toFixed(1)}: ` +
  row.per.map(([n, v]) => `${n} ${v.toFixed(1)}`).join(", ");

/**
 * CPU per render by process group, at a given concurrency: where the
 * machine's cores go besides Chromium's own work. Then the invoice again
 * with tracing exported, for what turning it on costs.
 */
export async function cpu(count: number, concurrency = 4): Promise<string> {
  const docs = benchDocuments();
  const cores = availableParallelism();
  const { rows, idle } = await measure({}, docs, count, concurrency, true);
  const collector = await discardingCollector();
  const traced = await measure({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }, docs.slice(0, 1), count, concurrency).finally(() => collector.close());
  const plain = rows[0]!;
  const withTraces = traced.rows[0]!;
  return [
    `${count} requests per document at concurrency ${concurrency}; CPU ms per request by process group (services include their children: render includes Chromium):`,
    "",
    ...rows.map(line),
    "",
    "The machine's bound: at this concurrency its cores are saturated, so its throughput should be the cores' time over the CPU per request:",
    "",
    "| document | predicted (cores × 1000 ms / CPU per request) | measured | Node services per request |",
    "|---|---|---|---|",
    ...rows.map((r) => `| ${r.doc} | ${((cores * 1000) / totalMs(r)).toFixed(1)}/s | ${r.throughput.toFixed(1)}/s | ${nodeMs(r).toFixed(1)} ms |`),
    "",
    `Idle (no requests, ${IDLE_MS / 1000} s after a few), CPU ms per second: ${idle.map(([n, v]) => `${n} ${v.toFixed(1)}`).join(", ")}; ` +
      `the six services ${idle
        .filter(([n]) => NODE_SERVICES.includes(n))
        .reduce((t, [, v]) => t + v, 0)
        .toFixed(1)}.`,
    "",
    `With tracing on (every span exported by OTLP/HTTP to a collector that discards them): ${line(withTraces)}.`,
    `Tracing costs the six services ${(nodeMs(withTraces) - nodeMs(plain)).toFixed(1)} ms of CPU per invoice in this run.`,
  ].join("\n");
}

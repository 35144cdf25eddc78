import { readdirSync, readFileSync } from "node:fs";
import { startTestStack } from "@pressroom/stack";
import { benchDocuments } from "./documents";
import { benchKeys, runPressroom } from "./pressroom";

const TICK_MS = 10; // USER_HZ is 100 on Linux

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  ticks: number;
}

function processes(): Proc[] {
  const all: Proc[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const fields = stat.slice(close + 2).split(" ");
      all.push({ pid: Number(entry), ppid: Number(fields[1]), comm: stat.slice(stat.indexOf("(") + 1, close), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // The process ended while we read.
    }
  }
  return all;
}

/**
 * CPU ticks per process and its group: each service's process, its other
 * descendants by name (render's Chromium), nats-server, PostgreSQL, this process.
 */
function sample(roots: Map<string, number>): Map<number, { group: string; ticks: number }> {
  const all = processes();
  const children = new Map<number, Proc[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const claimed = new Map<number, { group: string; ticks: number }>();
  const add = (group: string, p: Proc) => claimed.set(p.pid, { group, ticks: p.ticks });
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

/** CPU ticks spent per group between two samples. A process that ended in between is not counted; one that started is, in full. */
function spent(before: ReturnType<typeof sample>, after: ReturnType<typeof sample>): Map<string, number> {
  const totals = new Map<string, number>();
  for (const [pid, { group, ticks }] of after) totals.set(group, (totals.get(group) ?? 0) + ticks - (before.get(pid)?.ticks ?? 0));
  return totals;
}

/**
 * CPU per render by process group, at a given concurrency: where the
 * machine's cores go besides Chromium's own work.
 */
export async function cpu(count: number, concurrency = 4): Promise<string> {
  const stack = await startTestStack({ env: { LOG_LEVEL: "warn", RENDER_SLOTS: String(concurrency) } });
  try {
    const keys = await benchKeys(stack, concurrency);
    const roots = new Map<string, number>([...stack.services.processes].map(([name, p]) => [name, p.child.pid!]));
    roots.set("bench client", process.pid);
    const lines = [
      `${count} requests per document at concurrency ${concurrency}; CPU ms per request by process group (services include their children: render includes Chromium):`,
      "",
    ];
    for (const doc of benchDocuments()) {
      await runPressroom(stack.baseUrl, keys, doc, concurrency, concurrency * 3);
      const before = sample(roots);
      const stats = await runPressroom(stack.baseUrl, keys, doc, concurrency, count);
      const after = sample(roots);
      const per = [...spent(before, after)].map(([name, ticks]) => [name, (ticks * TICK_MS) / stats.count] as const).sort((a, b) => b[1] - a[1]);
      const total = per.reduce((s, [, v]) => s + v, 0);
      lines.push(
        `${doc.name}: ${stats.throughput.toFixed(1)}/s, ${total.toFixed(0)} ms CPU per request: ${per.map(([n, v]) => `${n} ${v.toFixed(1)}`).join(", ")}`,
      );
      process.stdout.write(`${lines.at(-1)}\n`);
    }
    return lines.join("\n");
  } finally {
    await stack.stop();
  }
}

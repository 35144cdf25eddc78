import { readFileSync, readdirSync } from "node:fs";

function children(): Map<number, number[]> {
  const map = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = map.get(ppid) ?? [];
      list.push(Number(entry));
      map.set(ppid, list);
    } catch {
      // The process ended while we looked.
    }
  }
  return map;
}

/** Proportional set size: resident memory with shared pages divided among their sharers, so a tree's sum is honest. */
function pssKb(pid: number): number {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Memory of a process and all its descendants (Chromium's included), in MiB (sum of PSS). */
export function treeRssMiB(pid: number): number {
  const tree = children();
  let total = 0;
  const stack = [pid];
  while (stack.length) {
    const current = stack.pop()!;
    total += pssKb(current);
    stack.push(...(tree.get(current) ?? []));
  }
  return total / 1024;
}

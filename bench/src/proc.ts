import { readdirSync, readFileSync } from "node:fs";
import { descendantsOf } from "@pressroom/stack";

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
  return [pid, ...descendantsOf(pid)].reduce((total, p) => total + pssKb(p), 0) / 1024;
}

/**
 * One process as /proc/<pid>/stat tells it: parent, name, and CPU time in ms: its own (user and
 * system, all threads) and its reaped children's (cutime and cstime), so that a group's sum over two
 * samples keeps what a member that exited in between spent (its parent has it then). A sum over
 * pids is right; a difference per pid is not (a child that exits moves all of its time to its parent).
 */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** Its process group. */
  pgid: number;
  comm: string;
  cpuMs: number;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** Throws if the process is gone. */
export function procStat(pid: number): ProcStat {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const close = stat.lastIndexOf(")");
  const fields = stat.slice(close + 2).split(" ");
  return {
    pid,
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    comm: stat.slice(stat.indexOf("(") + 1, close),
    cpuMs: (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * TICK_MS,
  };
}

/** Every process of the machine, those that end while they are read left out. */
export function allProcStats(): ProcStat[] {
  const all: ProcStat[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      all.push(procStat(Number(entry)));
    } catch {
      // The process ended while we read.
    }
  }
  return all;
}

import { readdirSync, readFileSync } from "node:fs";
import { descendantsOf } from "@pressroom/stack";

/**
 * A process's memory in MiB, from /proc/<pid>/smaps_rollup: RSS (resident, shared pages counted
 * whole in every sharer) and PSS (proportional: shared pages divided among their sharers, so a
 * sum over processes is honest). Zeros for a process that is gone.
 */
export interface Memory {
  rssMiB: number;
  pssMiB: number;
}

export function memoryOf(pid: number): Memory {
  let rollup = "";
  try {
    rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  } catch {
    // The process ended.
  }
  const mib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? 0) / 1024;
  return { rssMiB: mib("Rss"), pssMiB: mib("Pss") };
}

/** A Chromium process's kind: its --type (renderer, zygote, gpu-process, utility), "browser" for the browser process; undefined once gone. */
export function chromiumType(pid: number): string | undefined {
  try {
    return /--type=([^\s\0]+)/.exec(readFileSync(`/proc/${pid}/cmdline`, "utf8"))?.[1] ?? "browser";
  } catch {
    return undefined;
  }
}

/** Memory of a process and all its descendants (Chromium's included), in MiB (sum of PSS). */
export function treePssMiB(pid: number): number {
  return [pid, ...descendantsOf(pid)].reduce((total, p) => total + memoryOf(p).pssMiB, 0);
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

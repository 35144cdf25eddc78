import { readFileSync } from "node:fs";
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

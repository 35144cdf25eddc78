import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PRLIMIT_PATH, RenderFailure, byteSize, sweepAbandonedDirs } from "../engine";

/** A tool's output kept for its error message (its first lines; the encrypt step keeps none: see qpdf.ts). */
const STDERR_KEPT = 2_000;

/** What bounds every tool a job's post-processing runs: its deadline (performance.now() time) and the output size cap. */
export interface ToolLimits {
  deadlineAt: number;
  maxOutputBytes: number;
}

/** The time left to `limits.deadlineAt`, at least 1 ms. */
export const timeLeft = (limits: ToolLimits) => Math.max(1, Math.floor(limits.deadlineAt - performance.now()));

const TOOL_NAMES: Record<string, string> = { gs: "Ghostscript", qpdf: "qpdf" };

export class ToolFailed extends Error {
  override readonly name = "ToolFailed";

  constructor(
    readonly tool: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`${tool} exited with ${exitCode ?? "a signal"}`);
  }
}

/** A tool's file that grew past the output cap while it wrote it. */
export function toolOutputCap(tool: string, maxBytes: number): RenderFailure {
  return new RenderFailure("output_cap", `${TOOL_NAMES[tool] ?? tool} wrote more than ${byteSize(maxBytes)} (the output size cap) while post-processing`);
}

/**
 * Runs a Debian tool (qpdf, gs) without a shell, bounded by what is left of the job's
 * deadline (past it the tool is killed and the job fails `deadline`, the document's fault like
 * any render that outlasts it) and by the output cap while it writes: it runs under prlimit's
 * RLIMIT_FSIZE, so no file it writes grows past the cap (the kernel stops it with SIGXFSZ,
 * and the job fails `output_cap` naming the tool). `okExitCodes` are successes too (qpdf's 3:
 * done, with warnings). A missing tool or a crash is ours (a plain Error); a refusal by the
 * tool is a ToolFailed the caller words. Resolves with what the tool wrote on stderr.
 */
export function runTool(tool: string, args: string[], limits: ToolLimits, okExitCodes: number[] = [0]): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    execFile(
      PRLIMIT_PATH,
      [`--fsize=${limits.maxOutputBytes}`, "--", tool, ...args],
      { timeout: timeLeft(limits), killSignal: "SIGKILL", maxBuffer: 1024 * 1024, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } },
      (err, _stdout, stderr) => {
        if (!err) return resolve(String(stderr));
        const failed = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string; signal?: string };
        if (failed.signal === "SIGXFSZ") return reject(toolOutputCap(tool, limits.maxOutputBytes));
        if (failed.killed && failed.signal === "SIGKILL")
          return reject(new RenderFailure("deadline", `post-processing did not finish within the render deadline (${tool})`));
        if (typeof failed.code === "number" && okExitCodes.includes(failed.code)) return resolve(String(stderr));
        if (typeof failed.code !== "number") return reject(new Error(`${tool} could not run: ${failed.message}`));
        reject(new ToolFailed(tool, failed.code, String(stderr).slice(0, STDERR_KEPT)));
      },
    );
  });
}

/** A tool's output file, its size checked before it is read: never more than the cap in memory. */
export async function readOutput(file: string, tool: string, maxOutputBytes: number): Promise<Uint8Array> {
  if ((await stat(file)).size > maxOutputBytes) throw toolOutputCap(tool, maxOutputBytes);
  return readFile(file);
}

/** Scratch directories are named after the process that owns them: `pressroom-pdf-<pid>-<random>`. */
const SCRATCH_PREFIX = "pressroom-pdf-";
const OWNED_SCRATCH = new RegExp(`^${SCRATCH_PREFIX}(\\d+)-`);

/**
 * A private directory (mode 0700, under the OS's temporary directory) for one job's files,
 * removed with everything in it once `use` settles. Passwords written there (qpdf's argument
 * file) are readable by this user only and gone when the job's post-processing ends. Those of
 * a process killed before it could remove them are swept when the service starts
 * (sweepAbandonedScratch).
 */
export async function withWorkDir<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), `${SCRATCH_PREFIX}${process.pid}-`));
  try {
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Removes the scratch directories of processes that are gone; returns their names. */
export function sweepAbandonedScratch(dir = tmpdir()): Promise<string[]> {
  return sweepAbandonedDirs(OWNED_SCRATCH, dir);
}

import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RenderFailure } from "../engine";

/** A tool's output kept for its error message (its first lines; the encrypt step keeps none: see qpdf.ts). */
const STDERR_KEPT = 2_000;

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

/**
 * Runs a Debian tool (qpdf, gs) without a shell, bounded by `timeoutMs` (the job's deadline
 * left): past it the tool is killed and the job fails `deadline`, the document's fault like
 * any render that outlasts it. `okExitCodes` are successes too (qpdf's 3: done, with
 * warnings). A missing tool or a crash is ours (a plain Error); a refusal by
 * the tool is a ToolFailed the caller words. Resolves with what the tool wrote on stderr.
 */
export function runTool(tool: string, args: string[], timeoutMs: number, okExitCodes: number[] = [0]): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    execFile(
      tool,
      args,
      { timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 1024 * 1024, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } },
      (err, _stdout, stderr) => {
        if (!err) return resolve(String(stderr));
        const failed = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string; signal?: string };
        if (failed.killed && failed.signal === "SIGKILL")
          return reject(new RenderFailure("deadline", `post-processing did not finish within the render deadline (${tool})`));
        if (typeof failed.code === "number" && okExitCodes.includes(failed.code)) return resolve(String(stderr));
        if (typeof failed.code !== "number") return reject(new Error(`${tool} could not run: ${failed.message}`));
        reject(new ToolFailed(tool, failed.code, String(stderr).slice(0, STDERR_KEPT)));
      },
    );
  });
}

/**
 * A private directory (mode 0700, under the OS's temporary directory) for one job's files,
 * removed with everything in it once `use` settles. Passwords written there (qpdf's argument
 * file) are readable by this user only and gone when the job's post-processing ends.
 */
export async function withWorkDir<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "pressroom-pdf-"));
  try {
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

import { spawn, type ChildProcess } from "node:child_process";
import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Logger } from "@pressroom/platform/logger";

/** The only names of the worker's environment the post-processing process gets: none can hold a credential. */
export const PASSED_TO_POSTPROCESS = ["PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "LOG_LEVEL"] as const;
/** The user a worker running as root starts it as: then it cannot read the worker's files (its gRPC key, 0600). */
const NOBODY = 65534;
const STOP_MS = 3_000;

const MAIN_FILE = path.join(__dirname, "..", `postprocess-main${path.extname(__filename)}`);

/** The environment the post-processing process starts with: PASSED_TO_POSTPROCESS only, and its port. */
export function postProcessEnv(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_TO_POSTPROCESS) if (source[name] !== undefined) env[name] = source[name];
  return { ...env, RENDER_POSTPROCESS_PORT: "0" };
}

/**
 * The post-processing process of a worker with no RENDER_POSTPROCESS_URL (locally, the tests):
 * `dist/postprocess-main.js` started as a child with postProcessEnv, no descriptor but its
 * standard streams, and, when the worker runs as root, as the user nobody. Its log lines are
 * passed through to the worker's output. Started at once; when it exits unasked, the next task
 * starts a fresh one.
 */
export class PostProcessHost {
  private child: ChildProcess | undefined;
  private endpoint: Promise<string> | undefined;
  private closed = false;

  /** Throws, naming the path and the ways out, when the worker runs as root and nobody could not start the child. */
  constructor(private readonly logger: Logger) {
    if (process.getuid?.() === 0) {
      const blocked = closedToNobody([
        { file: process.execPath, need: "run" },
        { file: MAIN_FILE, need: "read" },
        { file: require.resolve("pdf-lib"), need: "read" },
      ]);
      if (blocked !== undefined) throw new Error(nobodyCannotStart(blocked));
    }
    void this.url().catch(() => undefined);
  }

  /** The child's loopback endpoint, once it listens. */
  url(): Promise<string> {
    if (this.closed) return Promise.reject(new Error("post-processing is closed"));
    this.endpoint ??= this.start();
    return this.endpoint;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  private start(): Promise<string> {
    // Under tsx (the tests) the TypeScript source runs through tsx's require hook (pdf-steps.ts loads its threads' the same way).
    const args = path.extname(MAIN_FILE) === ".ts" ? ["--require", require.resolve("tsx/cjs"), MAIN_FILE] : [MAIN_FILE];
    const asNobody = process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : {};
    const child = spawn(process.execPath, args, { env: postProcessEnv(), stdio: ["ignore", "pipe", "pipe"], cwd: path.dirname(MAIN_FILE), ...asNobody });
    this.child = child;
    child.stderr!.pipe(process.stderr, { end: false });
    const lines = createInterface({ input: child.stdout! });
    const endpoint = new Promise<string>((resolve, reject) => {
      lines.on("line", (line) => {
        const port = portOf(line);
        if (port === undefined) return void process.stdout.write(`${line}\n`);
        resolve(`http://127.0.0.1:${port}`);
      });
      child.once("error", reject);
      child.once("exit", (code, signal) => {
        reject(new Error(`the post-processing process exited (${code ?? signal}) before it listened`));
        if (this.child === child) {
          this.child = undefined;
          this.endpoint = undefined;
        }
        if (!this.closed) this.logger.error({ code, signal }, "the post-processing process exited; the next task starts another");
      });
    });
    endpoint.then(
      (url) => this.logger.info({ pid: child.pid, endpoint: url }, "post-processing process started"),
      () => undefined,
    );
    return endpoint;
  }

  /** Stops the child (SIGTERM, then SIGKILL): after the worker's renders have ended. */
  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), STOP_MS).unref();
    });
  }
}

/** A file the post-processing process needs, and what it does with it. */
export interface NeededFile {
  file: string;
  need: "read" | "run";
}

/** A path the user nobody is kept from, what it would have done with it, and the path's mode. */
export interface ClosedPath {
  path: string;
  need: "enter" | "read" | "run";
  mode: number;
}

/**
 * The first path the user nobody is kept from: a directory on the way to one of the files that it
 * cannot enter, or a file it cannot read (or run). Undefined when nothing is in the way. Symbolic
 * links are followed first, as the child's loader follows them.
 */
export function closedToNobody(files: readonly NeededFile[]): ClosedPath | undefined {
  for (const { file, need } of files) {
    const real = realpathSync(file);
    const steps: { path: string; need: ClosedPath["need"] }[] = [{ path: real, need }];
    for (let dir = path.dirname(real); ; dir = path.dirname(dir)) {
      steps.unshift({ path: dir, need: "enter" });
      if (dir === path.dirname(dir)) break;
    }
    for (const step of steps) {
      const stat = statSync(step.path);
      if (!grantsNobody(stat, step.need === "read" ? 0o004 : 0o001)) return { ...step, mode: stat.mode & 0o7777 };
    }
  }
  return undefined;
}

/** Whether a file's mode gives the user nobody (or its group, nogroup) the others' `bit`, through the bits that apply to it. */
function grantsNobody(stat: { uid: number; gid: number; mode: number }, bit: number): boolean {
  if (stat.uid === NOBODY) return (stat.mode & (bit << 6)) !== 0;
  if (stat.gid === NOBODY) return (stat.mode & (bit << 3)) !== 0;
  return (stat.mode & bit) !== 0;
}

/** The start-up error of a worker whose post-processing child could not load its own code. */
export function nobodyCannotStart(closed: ClosedPath): string {
  const mode = closed.mode.toString(8).padStart(4, "0");
  const fix = { enter: "o+x", read: "o+r", run: "o+x" }[closed.need];
  return (
    `render runs as root, so it starts its post-processing process as the user nobody (uid ${NOBODY}), ` +
    `which cannot ${closed.need} ${closed.path} (mode ${mode}). Make it reachable by others (chmod ${fix} ${closed.path}), ` +
    `run render as a user other than root, or point RENDER_POSTPROCESS_URL at a post-processing process of its own`
  );
}

function portOf(line: string): number | undefined {
  try {
    const parsed = JSON.parse(line) as { port?: unknown; level?: unknown };
    return typeof parsed.port === "number" && parsed.level === undefined ? parsed.port : undefined;
  } catch {
    return undefined;
  }
}

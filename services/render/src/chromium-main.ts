/**
 * Chromium on its own, for a render worker that connects to it (RENDER_CHROMIUM_URL): the
 * chart runs this in a container of its own in the render pod, as a user of its own, with no
 * credential in its environment or on its filesystem. It starts chromium-headless-shell with
 * the flags and the minimal environment the worker would launch it with, its DevTools
 * endpoint on 127.0.0.1 only, and starts it again when it exits; SIGTERM stops it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { createLogger } from "@pressroom/platform/logger";
import { loadChromiumHostConfig } from "./config";
import { DEFAULT_CHROMIUM_PATH, chromiumEnv, limitedCommand, makeProfileDir, remoteChromiumArgs } from "./engine/chromium";

/** Renderer V8 heap, as the engine's default. */
const RENDERER_HEAP_MIB = 512;
const STOP_MS = 3_000;
const MAX_RESTART_DELAY_MS = 5_000;
/** A Chromium that ran this long before it exited starts again at once. */
const HEALTHY_RUN_MS = 30_000;

function main(): void {
  const config = loadChromiumHostConfig();
  const logger = createLogger("chromium", config.LOG_LEVEL);
  const executablePath = config.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;
  let child: ChildProcess | undefined;
  let stopping = false;
  let failures = 0;

  const start = () => {
    const userDataDir = makeProfileDir();
    const args = remoteChromiumArgs({ sandbox: config.RENDER_CHROMIUM_SANDBOX, rendererHeapMiB: RENDERER_HEAP_MIB }, userDataDir, config.RENDER_CHROMIUM_PORT);
    const startedAt = Date.now();
    // Its own process group, so that stopping it reaches its renderers and helpers too.
    // Under its data limit (see limitedCommand), which each of its renderers inherits.
    const command = limitedCommand(executablePath, args, config.RENDER_CHROMIUM_PROCESS_MEMORY_MIB);
    const proc = spawn(command.command, command.args, { env: chromiumEnv(userDataDir), stdio: ["ignore", "ignore", "pipe"], detached: true });
    child = proc;
    proc.stderr!.on("data", (chunk: Buffer) => logger.debug({ chromium: chunk.toString("utf8").trimEnd() }, "chromium output"));
    proc.once("error", (err) => logger.error({ err, executablePath }, "chromium could not be started"));
    proc.once("exit", (code, signal) => {
      killGroup(proc, "SIGKILL");
      rmSync(userDataDir, { recursive: true, force: true });
      if (stopping) return;
      failures = Date.now() - startedAt >= HEALTHY_RUN_MS ? 0 : failures + 1;
      const delay = failures === 0 ? 0 : Math.min(250 * 2 ** (failures - 1), MAX_RESTART_DELAY_MS);
      logger.error({ code, signal, restartInMs: delay }, "chromium exited; starting it again");
      setTimeout(start, delay);
    });
    logger.info({ pid: proc.pid, port: config.RENDER_CHROMIUM_PORT }, "chromium started, DevTools on 127.0.0.1");
  };

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping chromium");
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) process.exit(0);
    proc.once("exit", () => process.exit(0));
    killGroup(proc, "SIGTERM");
    setTimeout(() => killGroup(proc, "SIGKILL"), STOP_MS).unref();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  start();
}

function killGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (!proc.pid) return;
  try {
    process.kill(-proc.pid, signal);
  } catch {
    // Already gone.
  }
}

main();

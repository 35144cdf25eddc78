/**
 * Chromium on its own, for a render worker that connects to it (RENDER_CHROMIUM_URL): the
 * chart runs this in a container of its own in the render pod, as a user of its own, with no
 * credential in its environment or on its filesystem. It starts chromium-headless-shell with
 * the flags and the minimal environment the worker would launch it with, its DevTools
 * endpoint on 127.0.0.1 only. When Chromium exits on its own (a crash, a document that killed
 * it), this process exits too, with a non-zero code: the kubelet restarts the container, a fresh
 * one, rather than a browser relaunched inside whatever the old one left behind (its /tmp, a
 * renderer still running). SIGTERM stops it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { createLogger } from "@pressroom/platform/logger";
import { loadChromiumHostConfig } from "./config";
import { DEFAULT_CHROMIUM_PATH, chromiumEnv, limitedCommand, makeProfileDir, remoteChromiumArgs } from "./engine/chromium";

/** Renderer V8 heap, as the engine's default. */
const RENDERER_HEAP_MIB = 512;
const STOP_MS = 3_000;
/** The exit code when Chromium exited unasked. */
const CHROMIUM_EXITED = 70;

function main(): void {
  const config = loadChromiumHostConfig();
  const logger = createLogger("chromium", config.LOG_LEVEL);
  const executablePath = config.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;
  let child: ChildProcess | undefined;
  let stopping = false;

  const start = () => {
    const userDataDir = makeProfileDir();
    const args = remoteChromiumArgs({ sandbox: config.RENDER_CHROMIUM_SANDBOX, rendererHeapMiB: RENDERER_HEAP_MIB }, userDataDir, config.RENDER_CHROMIUM_PORT);
    // Its own process group, so that stopping it reaches its renderers and helpers too.
    // Under its data limit (see limitedCommand), which each of its renderers inherits.
    const command = limitedCommand(executablePath, args, config.RENDER_CHROMIUM_PROCESS_MEMORY_MIB);
    const proc = spawn(command.command, command.args, { env: chromiumEnv(userDataDir), stdio: ["ignore", "ignore", "pipe"], detached: true });
    child = proc;
    proc.stderr!.on("data", (chunk: Buffer) => logger.debug({ chromium: chunk.toString("utf8").trimEnd() }, "chromium output"));
    proc.once("error", (err) => {
      logger.error({ err, executablePath }, "chromium could not be started");
      process.exit(CHROMIUM_EXITED);
    });
    proc.once("exit", (code, signal) => {
      killGroup(proc, "SIGKILL");
      rmSync(userDataDir, { recursive: true, force: true });
      if (stopping) return;
      logger.error({ code, signal }, "chromium exited; exiting so that its container is restarted");
      process.exit(CHROMIUM_EXITED);
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

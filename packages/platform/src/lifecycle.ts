import { createServer, type Server } from "node:http";
import { AppError, errorBody, notReady } from "./errors";
import type { Logger } from "./logger";
import { serveMetrics } from "./telemetry/metrics";
import { shutdownTelemetry } from "./telemetry/setup";

/**
 * Shutdown runs in this order, each stage after the previous one finished,
 * all within SHUTDOWN_TIMEOUT_MS: not ready (and, with SHUTDOWN_DELAY_MS, still
 * serving while the endpoints drop it) → stop accepting requests → stop
 * consuming messages → finish the work in flight → close the connections it
 * used (NATS, clients, Postgres) → flush telemetry → exit. Each step is given
 * the time left.
 */
export const SHUTDOWN_STAGES = ["notReady", "stopAccepting", "stopConsuming", "finishWork", "closeConnections", "flushTelemetry"] as const;
export type ShutdownStage = (typeof SHUTDOWN_STAGES)[number];

/** A shutdown step; `remainingMs` is what is left of SHUTDOWN_TIMEOUT_MS when it starts. */
type HookFn = (remainingMs: number) => Promise<void> | void;
type Hook = { name: string; fn: HookFn };

export class Lifecycle {
  private readonly hooks = new Map<ShutdownStage, Hook[]>();
  private ready = false;
  private stopping: Promise<void> | undefined;
  private readonly readinessChecks: (() => Promise<boolean> | boolean)[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {
    this.on("notReady", "readiness", () => {
      this.ready = false;
    });
    this.on("flushTelemetry", "telemetry", () => shutdownTelemetry());
  }

  on(stage: ShutdownStage, name: string, fn: HookFn): this {
    const list = this.hooks.get(stage) ?? [];
    list.push({ name, fn });
    this.hooks.set(stage, list);
    return this;
  }

  /** Readiness: the process is started and every dependency check passes. */
  addReadinessCheck(check: () => Promise<boolean> | boolean): void {
    this.readinessChecks.push(check);
  }

  setReady(): void {
    this.ready = true;
  }

  async isReady(): Promise<boolean> {
    if (!this.ready || this.stopping) return false;
    for (const check of this.readinessChecks) if (!(await check())) return false;
    return true;
  }

  /** Runs the shutdown stages once; later calls return the same promise. */
  shutdown(reason: string): Promise<void> {
    this.stopping ??= this.runStages(reason);
    return this.stopping;
  }

  private async runStages(reason: string): Promise<void> {
    this.logger.info({ reason }, "shutting down");
    const deadline = Date.now() + this.timeoutMs;
    for (const stage of SHUTDOWN_STAGES) {
      for (const hook of this.hooks.get(stage) ?? []) {
        const started = Date.now();
        const remaining = Math.max(0, deadline - started);
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            Promise.resolve(remaining).then(hook.fn),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error("timed out")), remaining);
            }),
          ]);
        } catch (err) {
          this.logger.warn({ err, stage, hook: hook.name }, "shutdown step failed");
        } finally {
          clearTimeout(timer);
          this.logger.debug({ stage, hook: hook.name, ms: Date.now() - started }, "shutdown step done");
        }
      }
    }
    this.logger.info("stopped");
  }

  /** Installs SIGINT/SIGTERM handlers that shut down and exit. */
  handleSignals(): void {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      process.once(signal, () => {
        void this.shutdown(signal).finally(() => process.exit(0));
      });
    }
  }
}

/**
 * A small HTTP server for probes and scrapes: /livez answers while the process
 * runs, /readyz only when the lifecycle is ready (dependencies checked),
 * /metrics the process's metrics in the Prometheus text format.
 */
export async function startHealthServer(lifecycle: Lifecycle, port: number, host = "127.0.0.1"): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    if (req.url === "/livez") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
      return;
    }
    if (req.url === "/readyz") {
      void lifecycle.isReady().then((ready) => {
        const [status, body] = ready ? [200, { status: "ready" }] : [503, errorBody(notReady())];
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      });
      return;
    }
    if (req.url === "/metrics") {
      serveMetrics(req, res);
      return;
    }
    res
      .writeHead(404, { "content-type": "application/json" })
      .end(JSON.stringify(errorBody(new AppError("NOT_FOUND", "no such probe", "Use /livez, /readyz or /metrics."))));
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address();
  lifecycle.on("flushTelemetry", "health server", () => new Promise<void>((resolve) => server.close(() => resolve())));
  return { server, port: typeof address === "object" && address ? address.port : port };
}

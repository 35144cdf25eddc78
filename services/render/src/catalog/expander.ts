import path from "node:path";
import { Worker, type WorkerOptions } from "node:worker_threads";
import { AppError } from "@pressroom/platform";
import { RenderFailure } from "../engine";

/** One expansion, as sent to a thread. `cacheKey` names a catalog template version ("" for raw html). */
export interface ExpandTask {
  id: number;
  source: string;
  cacheKey: string;
  dataJson: string;
  maxBytes: number;
}

export type ExpandReply = { id: number; html: string } | { id: number; failure: "template"; message: string } | { id: number; failure: "output_cap" };

export interface ExpanderOptions {
  /** Threads, one per render slot: a job never waits for another job's expansion. */
  threads: number;
  /** The largest HTML an expansion may produce, in UTF-8 bytes. */
  maxOutputBytes: number;
  /** V8 heap of each thread, in MiB. Default 256. */
  memoryMiB?: number;
}

interface Pending {
  task: ExpandTask;
  worker?: Worker;
  resolve(html: string): void;
  reject(err: Error): void;
}

const THREAD_FILE = path.join(__dirname, `expand-thread${path.extname(__filename)}`);
const TEMPLATE_HINT = "Fix the template syntax or the data passed to it.";

/** Under tsx (the tests) the thread's TypeScript source is loaded through tsx's require hook. */
function startThread(options: WorkerOptions): Worker {
  if (path.extname(THREAD_FILE) !== ".ts") return new Worker(THREAD_FILE, options);
  return new Worker(`require(${JSON.stringify(require.resolve("tsx/cjs"))}); require(${JSON.stringify(THREAD_FILE)});`, { ...options, eval: true });
}

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/**
 * Expands Handlebars templates (raw html and catalog templates alike) on a
 * small pool of worker threads, so that no document can hold the render
 * service's event loop. Each expansion has a time limit (the job's render
 * deadline, waiting for a thread included), an output cap and a heap limit; a
 * thread that overruns its time or heap is terminated and replaced. Failures
 * are the document's: RenderFailure naming the limit, or RENDER_FAILED for a
 * template error.
 */
export class TemplateExpander {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Pending>();
  private readonly queue: Pending[] = [];
  /** Threads that came up: only those are replaced when they die (a thread that cannot start is not retried in a loop). */
  private readonly started = new WeakSet<Worker>();
  private readonly memoryMiB: number;
  private nextId = 1;
  private closed = false;

  constructor(private readonly opts: ExpanderOptions) {
    if (!Number.isInteger(opts.threads) || opts.threads < 1) throw new Error("ExpanderOptions.threads must be a positive integer");
    this.memoryMiB = opts.memoryMiB ?? 256;
    for (let i = 0; i < opts.threads; i++) this.idle.push(this.spawn());
  }

  /** The HTML of `source` filled with the data, or a rejection naming what went wrong. */
  expand(input: { source: string; cacheKey?: string; dataJson: string; timeoutMs: number }): Promise<string> {
    if (this.closed) return Promise.reject(new RenderFailure("crashed", "the render engine is shutting down"));
    if (this.idle.length + this.busy.size === 0) return Promise.reject(new RenderFailure("crashed", "no template thread could start"));
    const task: ExpandTask = {
      id: this.nextId++,
      source: input.source,
      cacheKey: input.cacheKey ?? "",
      dataJson: input.dataJson,
      maxBytes: this.opts.maxOutputBytes,
    };
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        const index = this.queue.indexOf(pending);
        if (index >= 0) this.queue.splice(index, 1);
        if (pending.worker) this.replace(pending.worker);
        reject(new RenderFailure("deadline", `template expansion exceeded the ${Math.round(input.timeoutMs / 100) / 10} s render deadline`));
      }, input.timeoutMs);
      const pending: Pending = {
        task,
        resolve: (html) => {
          clearTimeout(timer);
          resolve(html);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.queue.push(pending);
      this.dispatch();
    });
  }

  /** Threads running an expansion now. */
  get running(): number {
    return this.busy.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(new RenderFailure("crashed", "the render engine is shutting down"));
    const workers = [...this.idle.splice(0), ...this.busy.keys()];
    for (const [, pending] of this.busy) pending.reject(new RenderFailure("crashed", "the render engine is shutting down"));
    this.busy.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private spawn(): Worker {
    const worker = startThread({ resourceLimits: { maxOldGenerationSizeMb: this.memoryMiB } });
    worker.unref();
    worker.once("online", () => this.started.add(worker));
    worker.on("message", (reply: ExpandReply) => this.settle(worker, reply));
    worker.on("error", (err) => this.lost(worker, err));
    worker.on("exit", () => this.lost(worker));
    return worker;
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const worker = this.idle.pop()!;
      const pending = this.queue.shift()!;
      pending.worker = worker;
      this.busy.set(worker, pending);
      worker.postMessage(pending.task);
    }
  }

  private settle(worker: Worker, reply: ExpandReply): void {
    const pending = this.busy.get(worker);
    if (!pending || pending.task.id !== reply.id) return;
    this.busy.delete(worker);
    this.idle.push(worker);
    if ("html" in reply) pending.resolve(reply.html);
    else if (reply.failure === "output_cap") pending.reject(outputCap(this.opts.maxOutputBytes));
    else pending.reject(new AppError("RENDER_FAILED", `template error: ${reply.message}`, TEMPLATE_HINT));
    this.dispatch();
  }

  /** A thread that died by itself (its heap limit, or a crash): its job fails, and a new thread takes its place. */
  private lost(worker: Worker, err?: Error): void {
    const pending = this.busy.get(worker);
    if (!this.replace(worker) || !pending) return;
    const outOfMemory = (err as { code?: string } | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY";
    pending.reject(
      outOfMemory
        ? new RenderFailure("output_cap", `template expansion needed more than ${this.memoryMiB} MiB (the template memory limit)`)
        : new RenderFailure("crashed", "the template thread stopped while expanding the document"),
    );
  }

  /** Terminates a thread and starts another; false when it was already gone. */
  private replace(worker: Worker): boolean {
    const index = this.idle.indexOf(worker);
    if (index >= 0) this.idle.splice(index, 1);
    else if (!this.busy.delete(worker)) return false;
    void worker.terminate();
    if (!this.started.has(worker)) {
      if (this.idle.length + this.busy.size === 0)
        for (const waiting of this.queue.splice(0)) waiting.reject(new RenderFailure("crashed", "no template thread could start"));
      return true;
    }
    if (!this.closed) {
      this.idle.push(this.spawn());
      this.dispatch();
    }
    return true;
  }
}

function outputCap(maxBytes: number): RenderFailure {
  return new RenderFailure("output_cap", `the expanded template is larger than ${mib(maxBytes)} (the template output cap)`);
}

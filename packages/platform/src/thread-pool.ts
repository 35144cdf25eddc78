import path from "node:path";
import { parentPort, Worker, type WorkerOptions } from "node:worker_threads";

/** Why a task of a ThreadPool did not get its answer. */
export class ThreadTaskFailed extends Error {
  override readonly name = "ThreadTaskFailed";

  constructor(
    /**
     * `timeout`: it ran past its time (its thread was terminated); `queue_full`: too many waiting; `memory`: its
     * thread ran out of heap; `threw`: the thread's handler threw (the message is its error's); `stopped`: its
     * thread died or the pool closed.
     */
    readonly reason: "timeout" | "queue_full" | "memory" | "threw" | "stopped",
    message: string,
  ) {
    super(message);
  }
}

export interface ThreadPoolOptions {
  /** The thread's module: a file that calls serveThread. Under tsx (the tests) its TypeScript source is loaded through tsx's require hook. */
  file: string;
  threads: number;
  /** Tasks waiting for a thread beyond this many are refused (`queue_full`). Default 1,000. */
  maxQueued?: number;
  /** Each thread's V8 heap, in MiB. Default 128. */
  memoryMiB?: number;
}

type ThreadMessage<R> = { id: number; reply: R } | { id: number; threw: string } | { ready: true };

interface Pending<T, R> {
  id: number;
  task: T;
  thread?: Worker;
  /** The task reached a thread: its time starts. */
  started(): void;
  resolve(reply: R): void;
  reject(err: Error): void;
}

function startThread(file: string, options: WorkerOptions): Worker {
  if (path.extname(file) !== ".ts") return new Worker(file, options);
  return new Worker(`require(${JSON.stringify(require.resolve("tsx/cjs"))}); require(${JSON.stringify(file)});`, { ...options, eval: true });
}

/**
 * Runs tasks on a fixed number of worker threads, one task per thread at a time, each within its
 * own time: a thread whose task overruns it is terminated (V8 stops it, however busy its loop)
 * and replaced, so no task can hold the caller's event loop or its thread for longer. The
 * thread's module answers each task with `serveThread`.
 */
export class ThreadPool<T, R> {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Pending<T, R>>();
  private readonly queue: Pending<T, R>[] = [];
  /** Threads whose module has not loaded yet: a task goes to a thread once it has (its time would otherwise include the start). */
  private readonly starting = new Set<Worker>();
  /** Threads that came up: only those are replaced when they die (a thread that cannot start is not restarted in a loop). */
  private readonly started = new WeakSet<Worker>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly opts: ThreadPoolOptions) {
    if (!Number.isInteger(opts.threads) || opts.threads < 1) throw new Error("ThreadPoolOptions.threads must be a positive integer");
    for (let i = 0; i < opts.threads; i++) this.spawn();
  }

  /**
   * The thread's answer to `task`, or ThreadTaskFailed. `timeoutMs` counts from when a thread takes
   * the task (the wait for one is bounded by maxQueued), or with `waitCounts` from now: a deadline
   * that the wait for a thread spends too (a task still waiting then leaves the queue).
   */
  run(task: T, timeoutMs: number, { waitCounts = false }: { waitCounts?: boolean } = {}): Promise<R> {
    if (this.closed) return Promise.reject(new ThreadTaskFailed("stopped", "the thread pool is closed"));
    if (this.idle.length + this.busy.size + this.starting.size === 0) return Promise.reject(new ThreadTaskFailed("stopped", "no thread could start"));
    if (this.queue.length >= (this.opts.maxQueued ?? 1_000))
      return Promise.reject(new ThreadTaskFailed("queue_full", "too many tasks are waiting for a thread"));
    return new Promise<R>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const startTimer = () => {
        timer = setTimeout(() => {
          const queued = this.queue.indexOf(pending);
          if (queued >= 0) this.queue.splice(queued, 1);
          if (pending.thread) this.replace(pending.thread);
          reject(new ThreadTaskFailed("timeout", `the task took longer than ${timeoutMs} ms`));
        }, timeoutMs);
      };
      const pending: Pending<T, R> = {
        id: this.nextId++,
        task,
        started: () => {
          if (!waitCounts) startTimer();
        },
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      if (waitCounts) startTimer();
      this.queue.push(pending);
      this.dispatch();
    });
  }

  /** Threads running a task now. */
  get running(): number {
    return this.busy.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    const stopped = () => new ThreadTaskFailed("stopped", "the thread pool is closed");
    for (const pending of this.queue.splice(0)) pending.reject(stopped());
    for (const pending of this.busy.values()) pending.reject(stopped());
    const threads = [...this.idle.splice(0), ...this.busy.keys(), ...this.starting];
    this.busy.clear();
    this.starting.clear();
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  private spawn(): void {
    const thread = startThread(this.opts.file, { resourceLimits: { maxOldGenerationSizeMb: this.opts.memoryMiB ?? 128 } });
    thread.unref();
    this.starting.add(thread);
    thread.on("message", (message: ThreadMessage<R>) => (message && "ready" in message ? this.up(thread) : this.settle(thread, message)));
    thread.on("error", (err) => this.lost(thread, err));
    thread.on("exit", () => this.lost(thread));
  }

  /** The thread's module has loaded (serveThread said so): it takes tasks from now on. */
  private up(thread: Worker): void {
    if (!this.starting.delete(thread)) return;
    this.started.add(thread);
    if (this.closed) return;
    this.idle.push(thread);
    this.dispatch();
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const thread = this.idle.pop()!;
      const pending = this.queue.shift()!;
      pending.thread = thread;
      this.busy.set(thread, pending);
      pending.started();
      thread.postMessage({ id: pending.id, task: pending.task });
    }
  }

  private settle(thread: Worker, message: Exclude<ThreadMessage<R>, { ready: true }>): void {
    const pending = this.busy.get(thread);
    if (!pending || pending.id !== message.id) return;
    this.busy.delete(thread);
    this.idle.push(thread);
    if ("threw" in message) pending.reject(new ThreadTaskFailed("threw", message.threw));
    else pending.resolve(message.reply);
    this.dispatch();
  }

  /** A thread that died by itself (its heap limit, a crash): its task fails, and a new thread takes its place. */
  private lost(thread: Worker, err?: Error): void {
    const pending = this.busy.get(thread);
    if (!this.replace(thread) || !pending) return;
    const memory = (err as { code?: string } | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY";
    pending.reject(
      memory
        ? new ThreadTaskFailed("memory", `the task needed more than ${this.opts.memoryMiB ?? 128} MiB`)
        : new ThreadTaskFailed("stopped", "the thread stopped while running the task"),
    );
  }

  /** Terminates a thread and starts another in its place; false when it was already gone. */
  private replace(thread: Worker): boolean {
    const idle = this.idle.indexOf(thread);
    if (idle >= 0) this.idle.splice(idle, 1);
    else if (!this.busy.delete(thread)) return false;
    void thread.terminate();
    if (!this.started.has(thread)) {
      if (this.idle.length + this.busy.size === 0)
        for (const waiting of this.queue.splice(0)) waiting.reject(new ThreadTaskFailed("stopped", "no thread could start"));
      return true;
    }
    if (!this.closed) this.spawn();
    return true;
  }
}

/** The body of a ThreadPool's thread, called once its module has loaded: answers each task with `handle`'s reply, or with what it threw. */
export function serveThread<T, R>(handle: (task: T) => R): void {
  parentPort!.postMessage({ ready: true });
  parentPort!.on("message", ({ id, task }: { id: number; task: T }) => {
    let message: ThreadMessage<R>;
    try {
      message = { id, reply: handle(task) };
    } catch (err) {
      message = { id, threw: err instanceof Error ? err.message : String(err) };
    }
    parentPort!.postMessage(message);
  });
}

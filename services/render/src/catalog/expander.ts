import path from "node:path";
import { AppError, ThreadPool, ThreadTaskFailed } from "@pressroom/platform";
import { RenderFailure } from "../engine";

/** One expansion, as sent to a thread. `cacheKey` names a catalog template version ("" for raw html, kept by its source's hash). */
export interface ExpandTask {
  source: string;
  cacheKey: string;
  /** The API key whose source it is, when it has no cacheKey: its compiled template is kept for that key alone. */
  keyId: string;
  dataJson: string;
  maxBytes: number;
}

export type ExpandReply = { html: string } | { failure: "template"; message: string } | { failure: "output_cap" };

export interface ExpanderOptions {
  /** Threads, one per render slot: a job never waits for another job's expansion. */
  threads: number;
  /** The largest HTML an expansion may produce, in UTF-8 bytes. */
  maxOutputBytes: number;
  /** V8 heap of each thread, in MiB. Default 256. */
  memoryMiB?: number;
}

const THREAD_FILE = path.join(__dirname, `expand-thread${path.extname(__filename)}`);
const TEMPLATE_HINT = "Fix the template syntax or the data passed to it.";

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/**
 * Expands Handlebars templates (raw html and catalog templates alike) on a
 * small pool of worker threads (the kit's ThreadPool), so that no document can
 * hold the render service's event loop. Each expansion has a time limit (the
 * job's render deadline, waiting for a thread included), an output cap and a
 * heap limit; a thread that overruns its time or heap is terminated and
 * replaced. Failures are the document's: RenderFailure naming the limit, or
 * RENDER_FAILED for a template error.
 */
export class TemplateExpander {
  private readonly pool: ThreadPool<ExpandTask, ExpandReply>;
  private readonly memoryMiB: number;

  constructor(private readonly opts: ExpanderOptions) {
    if (!Number.isInteger(opts.threads) || opts.threads < 1) throw new Error("ExpanderOptions.threads must be a positive integer");
    this.memoryMiB = opts.memoryMiB ?? 256;
    this.pool = new ThreadPool({ file: THREAD_FILE, threads: opts.threads, memoryMiB: this.memoryMiB });
  }

  /** The HTML of `source` filled with the data, or a rejection naming what went wrong. */
  async expand(input: { source: string; cacheKey?: string; keyId?: string; dataJson: string; timeoutMs: number }): Promise<string> {
    const task: ExpandTask = {
      source: input.source,
      cacheKey: input.cacheKey ?? "",
      keyId: input.keyId ?? "",
      dataJson: input.dataJson,
      maxBytes: this.opts.maxOutputBytes,
    };
    let reply: ExpandReply;
    try {
      reply = await this.pool.run(task, input.timeoutMs, { waitCounts: true });
    } catch (err) {
      throw this.failureOf(err, input.timeoutMs);
    }
    if ("html" in reply) return reply.html;
    if (reply.failure === "output_cap") throw outputCap(this.opts.maxOutputBytes);
    throw new AppError("RENDER_FAILED", `template error: ${reply.message}`, TEMPLATE_HINT);
  }

  /** Threads running an expansion now. */
  get running(): number {
    return this.pool.running;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private failureOf(err: unknown, timeoutMs: number): Error {
    if (!(err instanceof ThreadTaskFailed)) return err as Error;
    switch (err.reason) {
      case "timeout":
        return new RenderFailure("deadline", `template expansion exceeded the ${Math.round(timeoutMs / 100) / 10} s render deadline`);
      case "memory":
        return new RenderFailure("output_cap", `template expansion needed more than ${this.memoryMiB} MiB (the template memory limit)`);
      case "stopped":
        return new RenderFailure("crashed", `the template thread stopped: ${err.message}`);
      default:
        return new RenderFailure("crashed", `template expansion could not run: ${err.message}`);
    }
  }
}

function outputCap(maxBytes: number): RenderFailure {
  return new RenderFailure("output_cap", `the expanded template is larger than ${mib(maxBytes)} (the template output cap)`);
}

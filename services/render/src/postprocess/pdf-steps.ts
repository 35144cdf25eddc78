import path from "node:path";
import { Worker } from "node:worker_threads";
import { RenderFailure, type FailureReason } from "../engine";
import type { DescribeRequest } from "./document";
import type { PdfMetadata, Watermark } from "./options";
import { timeLeft, type ToolLimits } from "./tools";

/** One pdf-lib step, as its thread gets it. */
export type PdfStep =
  | { kind: "watermark"; pdf: Uint8Array; watermark: Watermark }
  | { kind: "info-aside"; pdf: Uint8Array }
  | { kind: "describe"; pdf: Uint8Array; request: DescribeRequest };

export interface PdfStepReply {
  pdf: Uint8Array;
  info?: PdfMetadata;
}

type ThreadMessage = { reply: PdfStepReply } | { error: { name?: string; message: string; reason?: string } };

const THREAD_FILE = path.join(__dirname, `pdf-thread${path.extname(__filename)}`);
/** A step's heap: a PDF within the output cap (50 MiB) parsed and written again, with room. */
const STEP_HEAP_MIB = 512;

function startThread(): Worker {
  const options = { resourceLimits: { maxOldGenerationSizeMb: STEP_HEAP_MIB } };
  // Under tsx (the tests) the thread's TypeScript source loads through tsx's require hook.
  if (path.extname(THREAD_FILE) !== ".ts") return new Worker(THREAD_FILE, options);
  return new Worker(`require(${JSON.stringify(require.resolve("tsx/cjs"))}); require(${JSON.stringify(THREAD_FILE)});`, { ...options, eval: true });
}

/**
 * A thread started ahead of the next step, so that a step does not wait for pdf-lib to load.
 * Each thread serves one step and is terminated after it: no job's document stays in a thread
 * another job's step runs in. Unreferenced while it waits, so it never keeps the process up.
 */
let spare: Worker | undefined;

function takeThread(): Worker {
  const thread = spare ?? startThread();
  thread.removeAllListeners();
  thread.ref();
  warmPdfSteps();
  return thread;
}

/** Starts the spare thread now (the post-processing process does at its start), so that even the first step finds pdf-lib loaded. */
export function warmPdfSteps(): void {
  const next = startThread();
  next.unref();
  next.once("error", () => undefined);
  next.once("exit", () => {
    if (spare === next) spare = undefined;
  });
  spare = next;
}

/**
 * Runs a pdf-lib step on a thread of its own, within what is left of the job's deadline: past
 * it the thread is terminated (V8 stops it, however busy) and the job fails `deadline`, the
 * document's fault like any render that outlasts it; a step that needs more than its heap fails
 * `output_cap` naming it. Its failures (PDF/UA's refusals) come back as they were thrown.
 */
export function runPdfStep(task: PdfStep, limits: ToolLimits): Promise<PdfStepReply> {
  return new Promise<PdfStepReply>((resolve, reject) => {
    const thread = takeThread();
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void thread.terminate();
      outcome();
    };
    const timer = setTimeout(
      () => settle(() => reject(new RenderFailure("deadline", `post-processing did not finish within the render deadline (pdf-lib, ${task.kind})`))),
      timeLeft(limits),
    );
    thread.once("message", (message: ThreadMessage) =>
      settle(() => {
        if ("reply" in message) return resolve(message.reply);
        const { name, message: text, reason } = message.error;
        reject(name === "RenderFailure" && reason ? new RenderFailure(reason as FailureReason, text) : new Error(text));
      }),
    );
    thread.once("error", (err: Error & { code?: string }) =>
      settle(() =>
        reject(
          err.code === "ERR_WORKER_OUT_OF_MEMORY"
            ? new RenderFailure("output_cap", `post-processing needed more than ${STEP_HEAP_MIB} MiB (the post-processing memory limit)`)
            : err,
        ),
      ),
    );
    thread.once("exit", (code) => settle(() => reject(new Error(`the pdf-lib thread exited with ${code} before answering`))));
    thread.postMessage(task);
  });
}

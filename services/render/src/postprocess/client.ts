import { request, type IncomingMessage } from "node:http";
import { withSpan } from "@pressroom/platform";
import { RenderFailure } from "../engine";
import { postProcessMetrics } from "./metrics";
import type { PostProcessing } from "./options";
import { partsOverCap, type AddPart } from "./qpdf";
import { timeLeft, type ToolLimits } from "./tools";
import { STEPS_HEADER, errorOf, frame, type StepTimes, type WireFailure, type WireTask } from "./wire";

export { postProcessingOf, wantsPostProcessing, type PostProcessing } from "./options";
export type { AddPart } from "./qpdf";

/** What the worker asks of the post-processing process (postprocess-main.ts). */
export interface PostProcessor {
  /** The job's post-processing of its printed PDF (see postProcess in index.ts). */
  postProcess(pdf: Uint8Array, steps: PostProcessing, limits: ToolLimits): Promise<Uint8Array>;
  /** The pages of the parts `produce` adds, in order, as one PDF (see mergeParts in qpdf.ts). */
  merge(produce: (add: AddPart) => Promise<void>, limits: ToolLimits): Promise<Uint8Array>;
  /** A test-mode png with its TEST stamp drawn (see png-stamp.ts): the png is decoded there, not in the worker. */
  stampPng(png: Uint8Array, limits: ToolLimits): Promise<Uint8Array>;
  /** The first page of a printed PDF as a png, after `steps` (see pagePng in index.ts); stops when `signal` aborts. */
  pagePng(pdf: Uint8Array, steps: PostProcessing | undefined, limits: ToolLimits, signal: AbortSignal): Promise<Uint8Array>;
}

/** How long past a task's deadline the worker waits for the process's own answer (its tools stop at the deadline). */
const ANSWER_GRACE_MS = 2_000;

/**
 * The worker's side of wire.ts: each task one POST over loopback to the post-processing
 * process at `endpoint()`, on a connection of its own (a kept-alive one could be closed by the
 * server as a task starts on it). The worker never parses a PDF or a png: it sends the bytes Chromium printed
 * and takes back what qpdf, Ghostscript and pdf-lib made of them. A merge's parts go as they are
 * rendered, their total held to the output cap here as there (past it, the parts left are
 * never rendered). The process's failures come back as they were (a RenderFailure is the
 * document's); one that does not answer by the deadline (and a grace) fails the job `deadline`.
 */
export class PostProcessClient implements PostProcessor {
  constructor(private readonly endpoint: () => Promise<string>) {}

  postProcess(pdf: Uint8Array, steps: PostProcessing, limits: ToolLimits): Promise<Uint8Array> {
    const names = Object.entries(steps).flatMap(([name, value]) => (value ? [name] : []));
    return withSpan("postprocess", { attributes: { "pressroom.postprocess.steps": names.join(",") } }, () =>
      this.call("/postprocess", limits, steps, async (send) => send(pdf)),
    );
  }

  merge(produce: (add: AddPart) => Promise<void>, limits: ToolLimits): Promise<Uint8Array> {
    let total = 0;
    return withSpan("postprocess.merge", {}, () =>
      this.call("/merge", limits, undefined, (send) =>
        produce(async (part) => {
          total += part.byteLength;
          if (total > limits.maxOutputBytes) throw partsOverCap(limits.maxOutputBytes);
          await send(part);
        }),
      ),
    );
  }

  stampPng(png: Uint8Array, limits: ToolLimits): Promise<Uint8Array> {
    return withSpan("postprocess.test_stamp", {}, () => this.call("/stamp-png", limits, undefined, (send) => send(png)));
  }

  pagePng(pdf: Uint8Array, steps: PostProcessing | undefined, limits: ToolLimits, signal: AbortSignal): Promise<Uint8Array> {
    return withSpan("postprocess.page_png", {}, () => this.call("/page-png", limits, steps, (send) => send(pdf), signal));
  }

  private async call(
    path: string,
    limits: ToolLimits,
    steps: PostProcessing | undefined,
    body: (send: AddPart) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<Uint8Array> {
    const task: WireTask = { timeLeftMs: timeLeft(limits), maxOutputBytes: limits.maxOutputBytes, ...(steps ? { steps } : {}) };
    const url = new URL(path, await this.endpoint());
    signal?.throwIfAborted();
    const req = request(url, { method: "POST", agent: false, headers: { "content-type": "application/octet-stream" }, ...(signal ? { signal } : {}) });
    const timer = setTimeout(
      () => req.destroy(new RenderFailure("deadline", "post-processing did not finish within the render deadline")),
      task.timeLeftMs + ANSWER_GRACE_MS,
    );
    const answered = new Promise<Uint8Array>((resolve, reject) => {
      req.once("error", reject);
      req.once("response", (res) => answerOf(res, limits.maxOutputBytes).then(resolve, reject));
    }).finally(() => clearTimeout(timer));
    // An answer that comes while parts are still being sent (a failure) ends the sending too.
    const early = answered.then(
      () => Promise.reject(new Error("the post-processing process answered before the request ended")),
      (err: unknown) => Promise.reject(err),
    );
    early.catch(() => undefined);
    // A write that fails (the process closed the connection) fails with the process's answer, when it gave one.
    const write = (chunk: Buffer) => new Promise<void>((resolve, reject) => req.write(chunk, (err) => (err ? reject(err) : resolve())));
    const send = (bytes: Uint8Array) =>
      Promise.race([early, Promise.all(frame(bytes).map(write)).catch((err: unknown) => answered.then(() => Promise.reject(err)))]).then(() => undefined);
    try {
      await send(Buffer.from(JSON.stringify(task)));
      await body(send);
    } catch (err) {
      req.destroy();
      answered.catch(() => undefined);
      throw err;
    }
    req.end();
    return answered;
  }
}

/** The process's answer: the document (its steps' durations recorded), or its failure as an error. */
async function answerOf(res: IncomingMessage, maxOutputBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxOutputBytes + 64 * 1024) throw new Error("the post-processing process answered more than the output cap");
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks);
  if (res.statusCode !== 200) throw errorOf(JSON.parse(body.toString("utf8")) as WireFailure);
  postProcessMetrics.steps(JSON.parse(String(res.headers[STEPS_HEADER] ?? "[]")) as StepTimes);
  return body;
}

/**
 * How the render worker and the post-processing process (postprocess-main.ts) speak over
 * loopback: one HTTP POST a task, its body a sequence of frames, each its length (8 bytes,
 * big-endian) then its bytes. The first frame is the task (JSON: the time left to its
 * deadline, the output cap, the steps), the next ones the PDFs: the printed document, or a
 * merge's parts one after the other as they are rendered. The answer is the PDF (200, its
 * steps' durations in STEPS_HEADER), or a failure (500, JSON WireFailure).
 */
import { RenderFailure, type FailureReason } from "../engine";
import type { PostProcessing } from "./options";

export const STEPS_HEADER = "x-pressroom-steps";
/** The largest task frame (the steps: metadata, a watermark's text, passwords). */
export const MAX_TASK_BYTES = 1024 * 1024;
const LENGTH_BYTES = 8;

export interface WireTask {
  timeLeftMs: number;
  maxOutputBytes: number;
  steps?: PostProcessing;
}

export interface WireFailure {
  message: string;
  /** Set for a RenderFailure (the document's fault). */
  reason?: FailureReason;
}

/** [step, seconds] of each step that ran. */
export type StepTimes = [string, number][];

export function frame(bytes: Uint8Array): Buffer[] {
  const length = Buffer.alloc(LENGTH_BYTES);
  length.writeBigUInt64BE(BigInt(bytes.byteLength));
  return [length, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)];
}

/**
 * The frames of `source`, each whole in memory once it has come (the task, or one PDF: never
 * all of them at once). A frame longer than `maxBytes(index)` fails with what `tooLong` makes,
 * before its bytes are read.
 */
export async function* readFrames(
  source: AsyncIterable<Buffer>,
  maxBytes: (index: number) => number,
  tooLong: (index: number, max: number) => Error,
): AsyncGenerator<Buffer> {
  let pending: Buffer = Buffer.alloc(0);
  let index = 0;
  let want: number | undefined;
  for await (const chunk of source) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      if (want === undefined) {
        if (pending.length < LENGTH_BYTES) break;
        const length = Number(pending.readBigUInt64BE(0));
        if (length > maxBytes(index)) throw tooLong(index, maxBytes(index));
        want = length;
        pending = pending.subarray(LENGTH_BYTES);
      }
      if (pending.length < want) break;
      const whole = Buffer.from(pending.subarray(0, want));
      pending = pending.subarray(want);
      want = undefined;
      index++;
      yield whole;
    }
  }
  if (want !== undefined || pending.length > 0) throw new Error("the post-processing request ended inside a frame");
}

export function failureOf(err: unknown): WireFailure {
  if (err instanceof RenderFailure) return { message: err.message, reason: err.reason };
  return { message: err instanceof Error ? err.message : String(err) };
}

export function errorOf(failure: WireFailure): Error {
  return failure.reason ? new RenderFailure(failure.reason, failure.message) : new Error(`post-processing failed: ${failure.message}`);
}

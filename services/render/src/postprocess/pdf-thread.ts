/**
 * The body of one pdf-lib step's thread (see pdf-steps.ts): waits, loaded, for its one step,
 * reads the PDF Chromium printed, changes it, and posts the result back, off the render
 * service's event loop, where the step's deadline can stop it.
 */
import { parentPort } from "node:worker_threads";
import { describe, drawWatermark, loadPdf, savePdf, setInfoAside } from "./document";
import type { PdfStep, PdfStepReply } from "./pdf-steps";

async function run(task: PdfStep): Promise<PdfStepReply> {
  if (task.kind === "info-aside") return setInfoAside(task.pdf);
  const doc = await loadPdf(task.pdf);
  if (task.kind === "watermark") {
    await drawWatermark(doc, task.watermark);
    return { pdf: await savePdf(doc, undefined) };
  }
  await describe(doc, task.request);
  return { pdf: await savePdf(doc, task.request.pdfa) };
}

parentPort!.once("message", (task: PdfStep) =>
  run(task).then(
    (reply) => parentPort!.postMessage({ reply }),
    (err: unknown) =>
      parentPort!.postMessage({
        error: err instanceof Error ? { name: err.name, message: err.message, reason: (err as { reason?: string }).reason } : { message: String(err) },
      }),
  ),
);

import { runPdfStep } from "./pdf-steps";
import { convertToPdfa } from "./pdfa";
import { firstPagePng } from "./page-png";
import { encrypt, mergeParts, type AddPart } from "./qpdf";
import type { ToolLimits } from "./tools";
import { metadataOver, TEST_STAMP, wantsPostProcessing, type PostProcessing } from "./options";
import type { StepTimes } from "./wire";

export { postProcessingOf, wantsPostProcessing, type PostProcessing } from "./options";
export { sweepAbandonedScratch, type ToolLimits } from "./tools";
export type { AddPart } from "./qpdf";
export { pngPixel, stampPng } from "./png-stamp";

/**
 * What runs in the post-processing process (postprocess-main.ts; the worker reaches it through
 * client.ts). Applies what the job asked for to its printed PDF, in this order: the watermark, then test
 * mode's TEST stamp over it (both before PDF/A conversion, which embeds their font like any
 * other, and after the document's own content, which cannot hide them), PDF/A (Ghostscript), what the document says
 * about itself (information dictionary, XMP, PDF/A's output intent, PDF/UA's markers), and
 * encryption last (qpdf, AES-256). Only the steps asked for run; nothing runs when none is
 * asked. `limits` (the job's deadline, the output cap) bound every external tool, and the
 * pdf-lib steps run on threads of their own that the deadline stops (pdf-steps.ts). Each step's
 * duration is added to `times`.
 */
export async function postProcess(pdf: Uint8Array, steps: PostProcessing, limits: ToolLimits, times: StepTimes = []): Promise<Uint8Array> {
  const step = timed(times);
  let out = pdf;
  if (steps.watermark) {
    const watermark = steps.watermark;
    out = await step("watermark", async () => (await runPdfStep({ kind: "watermark", pdf: out, watermark }, limits)).pdf);
  }
  if (steps.test) {
    out = await step("test_stamp", async () => (await runPdfStep({ kind: "watermark", pdf: out, watermark: TEST_STAMP }, limits)).pdf);
  }
  let metadata = steps.metadata;
  if (steps.pdfa) {
    const level = steps.pdfa;
    out = await step("pdfa", async () => {
      const aside = await runPdfStep({ kind: "info-aside", pdf: out }, limits);
      metadata = metadataOver(aside.info ?? { keywords: [] }, steps.metadata);
      return convertToPdfa(aside.pdf, level, limits);
    });
  }
  if (metadata || steps.pdfua || steps.pdfa) {
    const request = { ...(metadata ? { metadata } : {}), ...(steps.pdfa ? { pdfa: steps.pdfa } : {}), pdfua: steps.pdfua };
    out = await step("describe", async () => (await runPdfStep({ kind: "describe", pdf: out, request }, limits)).pdf);
  }
  if (steps.encrypt) {
    const encryption = steps.encrypt;
    out = await step("encrypt", () => encrypt(out, encryption, limits));
  }
  return out;
}

/**
 * The first page of a printed PDF as a png (a pdf template's preview; see firstPagePng), after
 * the steps given, if any (a preview's watermark: what changes how the page looks).
 */
export async function pagePng(pdf: Uint8Array, steps: PostProcessing | undefined, limits: ToolLimits, times: StepTimes = []): Promise<Uint8Array> {
  const page = steps && wantsPostProcessing(steps) ? await postProcess(pdf, steps, limits, times) : pdf;
  return timed(times)("page_png", () => firstPagePng(page, limits));
}

/** The pages of the parts `produce` adds, in order, as one PDF (a merged job's documents; see mergeParts). */
export function merge(produce: (add: AddPart) => Promise<void>, limits: ToolLimits, times: StepTimes = []): Promise<Uint8Array> {
  const step = timed(times);
  return mergeParts(produce, limits, (run) => step("merge", run));
}

function timed(times: StepTimes) {
  return (name: string, run: () => Promise<Uint8Array>): Promise<Uint8Array> => {
    const started = performance.now();
    return run().finally(() => times.push([name, (performance.now() - started) / 1000]));
  };
}

import { withSpan } from "@pressroom/platform";
import { describe, drawWatermark, loadPdf, savePdf, setInfoAside } from "./document";
import { convertToPdfa } from "./pdfa";
import { encrypt, merge as mergePdfs } from "./qpdf";
import { metadataOver, type PostProcessing } from "./options";
import { postProcessMetrics } from "./metrics";

export { postProcessingOf, wantsPostProcessing, type PostProcessing } from "./options";

/**
 * Applies what the job asked for to its printed PDF, in this order: the watermark (so PDF/A
 * conversion embeds its font like any other), PDF/A (Ghostscript), what the document says
 * about itself (information dictionary, XMP, PDF/A's output intent, PDF/UA's markers), and
 * encryption last (qpdf, AES-256). Only the steps asked for run; nothing runs when none is
 * asked. `deadlineAt` (performance.now() time) bounds every external tool.
 */
export async function postProcess(pdf: Uint8Array, steps: PostProcessing, deadlineAt: number): Promise<Uint8Array> {
  const left = () => Math.max(1, Math.floor(deadlineAt - performance.now()));
  let out = pdf;
  if (steps.watermark) {
    const watermark = steps.watermark;
    out = await step("watermark", async () => {
      const doc = await loadPdf(out);
      await drawWatermark(doc, watermark);
      return savePdf(doc, undefined);
    });
  }
  let metadata = steps.metadata;
  if (steps.pdfa) {
    const level = steps.pdfa;
    out = await step("pdfa", async () => {
      const aside = await setInfoAside(out);
      metadata = metadataOver(aside.info, steps.metadata);
      return convertToPdfa(aside.pdf, level, left());
    });
  }
  if (metadata || steps.pdfua || steps.pdfa) {
    out = await step("describe", async () => {
      const doc = await loadPdf(out);
      await describe(doc, { ...(metadata ? { metadata } : {}), ...(steps.pdfa ? { pdfa: steps.pdfa } : {}), pdfua: steps.pdfua });
      return savePdf(doc, steps.pdfa);
    });
  }
  if (steps.encrypt) {
    const encryption = steps.encrypt;
    out = await step("encrypt", () => encrypt(out, encryption, left()));
  }
  return out;
}

/** The pages of `parts`, in order, as one PDF (a merged job's documents). */
export function merge(parts: Uint8Array[], timeoutMs: number): Promise<Uint8Array> {
  return step("merge", () => mergePdfs(parts, timeoutMs));
}

function step(name: string, run: () => Promise<Uint8Array>): Promise<Uint8Array> {
  const started = performance.now();
  return withSpan(`postprocess.${name}`, {}, run).finally(() => postProcessMetrics.step(name, started));
}

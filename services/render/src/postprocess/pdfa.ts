import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RenderFailure } from "../engine";
import { readOutput, runTool, ToolFailed, withWorkDir, type ToolLimits } from "./tools";
import type { PdfaLevel } from "./options";

/** The resolution of a page Ghostscript flattens into an image (PDF/A-1's transparency): print quality. */
export const FLATTEN_DPI = 150;

/**
 * Rewrites the document as PDF/A with Ghostscript's pdfwrite: every font embedded (standard
 * fonts too), colour in RGB, no encryption, PDF 1.4 for PDF/A-1 (no object streams or
 * transparency) and 1.7 otherwise. PDF/A-1 forbids transparency, so Ghostscript flattens a page
 * that uses it (CSS opacity, colour emoji, a watermark's opacity) into one image: its text is
 * then no longer text. PDF/A-2b and 3b keep it. `PDFACompatibilityPolicy=2` makes Ghostscript stop rather
 * than write a file that claims PDF/A while breaking it (e.g. transparency in PDF/A-1b): the
 * job then fails, the document's doing. The output intent and the XMP identification are added
 * afterwards (`describe`), with the rest of the metadata, so both say the same. Ghostscript
 * does not carry a document's tag structure over, so PDF/A is not combined with PDF/UA.
 * A page flattened into an image is drawn at FLATTEN_DPI, not pdfwrite's default 720 dpi (an
 * A4 page of 48 million pixels): what Ghostscript writes is bounded by the resolution, and by
 * the output cap while it writes (runTool).
 */
export async function convertToPdfa(pdf: Uint8Array, level: PdfaLevel, limits: ToolLimits): Promise<Uint8Array> {
  return withWorkDir(async (dir) => {
    const input = join(dir, "in.pdf");
    const output = join(dir, "out.pdf");
    await writeFile(input, pdf, { mode: 0o600 });
    const args = [
      "-q",
      "-dBATCH",
      "-dNOPAUSE",
      "-dSAFER",
      "-sDEVICE=pdfwrite",
      `-r${FLATTEN_DPI}`,
      `-dPDFA=${level.part}`,
      "-dPDFACompatibilityPolicy=2",
      `-dCompatibilityLevel=${level.part === 1 ? "1.4" : "1.7"}`,
      "-sColorConversionStrategy=RGB",
      "-dEmbedAllFonts=true",
      `-sOutputFile=${output}`,
      input,
    ];
    // Ghostscript 10.0 exits 0 from some refusals ("… aborting conversion"), leaving no usable file.
    const refused = (stderr: string) =>
      new RenderFailure("invalid_document", `the document cannot be made ${level.name}: Ghostscript refused it (${firstLine(stderr)})`);
    try {
      const stderr = await runTool("gs", args, limits);
      if (/abort/i.test(stderr)) throw refused(stderr);
    } catch (err) {
      if (err instanceof ToolFailed) throw refused(err.stderr);
      throw err;
    }
    return readOutput(output, "gs", limits.maxOutputBytes);
  });
}

function firstLine(stderr: string): string {
  const line = stderr.split("\n").find((l) => l.trim() && !l.includes("/")) ?? "no reason given";
  return line.trim().slice(0, 200);
}

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readOutput, runTool, withWorkDir, type ToolLimits } from "./tools";

/** CSS's 96 pixels to the inch: a page's picture has as many pixels as its paper has CSS pixels. */
const PAGE_PNG_DPI = 96;
/**
 * Drawn at this many times PAGE_PNG_DPI, then scaled down: at 96 dpi alone Ghostscript puts each
 * glyph on a whole pixel, and small text gapes inside words ("Wirefram es").
 */
const OVERSAMPLING = 2;

/**
 * The first page of a printed PDF as a png, drawn by Ghostscript at PAGE_PNG_DPI on white paper
 * (oversampled, its text and shapes anti-aliased): what a reader sees of the page, margins, header
 * and footer included (a pdf template's preview). Bound like every tool by the deadline and the
 * output cap.
 */
export function firstPagePng(pdf: Uint8Array, limits: ToolLimits): Promise<Uint8Array> {
  return withWorkDir(async (dir) => {
    const input = join(dir, "in.pdf");
    const output = join(dir, "page.png");
    await writeFile(input, pdf, { mode: 0o600 });
    await runTool(
      "gs",
      [
        "-q",
        "-dBATCH",
        "-dNOPAUSE",
        "-dSAFER",
        "-sDEVICE=png16m",
        `-r${PAGE_PNG_DPI * OVERSAMPLING}`,
        `-dDownScaleFactor=${OVERSAMPLING}`,
        "-dFirstPage=1",
        "-dLastPage=1",
        "-dTextAlphaBits=4",
        "-dGraphicsAlphaBits=4",
        `-sOutputFile=${output}`,
        input,
      ],
      limits,
    );
    return readOutput(output, "gs", limits.maxOutputBytes);
  });
}

import type { CDPSession } from "puppeteer-core";
import { noop } from "./async";
import { outputCap, pageCap, type ActiveJob } from "./job";
import type { JobLayout } from "./paper";
import { captureClip } from "./region";
import { capPageRanges } from "./page-ranges";
import { countPdfPages } from "./pdf";
import { RenderFailure } from "./types";

/** What Chromium hands over of a printed PDF per read. */
const IO_CHUNK = 4 * 1024 * 1024;

/**
 * The page's viewport, or the region the layout names (the whole page, one element, a
 * rectangle), as an image (an opaque png unless `capture` says otherwise), refused past the
 * output cap. A transparent background is asked of the page only for this capture.
 */
export async function captureImage(
  session: CDPSession,
  { viewport, capture, region }: Pick<JobLayout, "viewport" | "capture" | "region">,
  maxOutputBytes: number,
): Promise<{ data: Uint8Array; pages: number }> {
  const clip = await captureClip(session, viewport, region);
  const transparent = capture?.omitBackground ?? false;
  if (transparent) await session.send("Emulation.setDefaultBackgroundColorOverride", { color: { r: 0, g: 0, b: 0, a: 0 } });
  try {
    const shot = await session.send("Page.captureScreenshot", {
      format: capture?.format ?? "png",
      ...(capture?.quality === undefined ? {} : { quality: capture.quality }),
      clip: { ...clip, scale: 1 },
      // A region may reach past the viewport: the page is laid out whole for the capture.
      captureBeyondViewport: region !== undefined,
      optimizeForSpeed: true,
      fromSurface: true,
    });
    const data = Buffer.from(shot.data, "base64");
    if (data.byteLength > maxOutputBytes) throw outputCap(maxOutputBytes);
    return { data, pages: 1 };
  } finally {
    if (transparent) await session.send("Emulation.setDefaultBackgroundColorOverride", {}).catch(noop);
  }
}

/**
 * Refuses a document that does not say its language on its root element: PDF/UA requires one, and Chromium
 * would otherwise write its own locale (en-US) into the PDF as if the document had said so.
 */
export async function requireLanguage(session: CDPSession): Promise<void> {
  const { result } = await session.send("Runtime.evaluate", {
    expression: "(document.documentElement && document.documentElement.getAttribute('lang') || '').trim()",
    returnByValue: true,
  });
  if (typeof result.value === "string" && result.value !== "") return;
  throw new RenderFailure(
    "invalid_document",
    'pdfua: the document does not say its language: set <html lang> on its root element, e.g. <html lang="en"> (PDF/UA requires it)',
  );
}

/** A print of the document, without the job's own page ranges, counted: how many pages there are to choose from. */
async function pagesWithoutRanges(session: CDPSession, job: ActiveJob, layout: JobLayout): Promise<number> {
  const printed = await session.send("Page.printToPDF", {
    ...layout.print,
    printBackground: true,
    pageRanges: `1-${job.limits.maxPages + 1}`,
    generateDocumentOutline: false,
    transferMode: "ReturnAsStream",
  });
  if (!printed.stream) throw new Error("printToPDF returned no stream");
  return countPdfPages(await readStream(session, printed.stream, job.limits.maxOutputBytes));
}

/**
 * The document printed as a (tagged) PDF: at most one page past the job's cap
 * is printed (the job's own ranges within it, see capPageRanges), the stream is
 * read in chunks and abandoned past the output cap, and the pages are counted
 * in the result.
 */
export async function printPdf(session: CDPSession, job: ActiveJob, layout: JobLayout): Promise<{ data: Uint8Array; pages: number }> {
  const ranges = capPageRanges(layout.print?.pageRanges, job.limits.maxPages);
  let stream: string | undefined;
  try {
    const printed = await session.send("Page.printToPDF", {
      printBackground: true,
      generateDocumentOutline: false,
      ...layout.print,
      pageRanges: ranges.print,
      transferMode: "ReturnAsStream",
      // Tagged: PDF/UA needs the structure, and the outline is made from it.
      generateTaggedPDF: true,
    });
    stream = printed.stream;
  } catch (err) {
    if (job.failure) throw job.failure;
    const message = err instanceof Error ? err.message : String(err);
    const ranges = layout.print?.pageRanges;
    if (ranges && /page range/i.test(message)) {
      const pages = await pagesWithoutRanges(session, job, layout);
      throw new RenderFailure(
        "invalid_document",
        `options.page_ranges "${ranges}" selects no page: the document has ${pages > job.limits.maxPages ? `more than ${job.limits.maxPages} pages` : pages === 1 ? "1 page (page 1)" : `${pages} pages (1-${pages})`}`,
      );
    }
    if (/content area is empty|invalid print parameters|page range/i.test(message)) {
      throw new RenderFailure("invalid_document", "the page settings leave nothing to print on");
    }
    throw err;
  }
  if (!stream) throw new Error("printToPDF returned no stream");
  const data = await readStream(session, stream, job.limits.maxOutputBytes);
  const pages = countPdfPages(data);
  if (pages > ranges.wanted) throw pageCap(job.limits.maxPages);
  return { data, pages };
}

async function readStream(session: CDPSession, handle: string, maxOutputBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const chunk = await session.send("IO.read", { handle, size: IO_CHUNK });
      const bytes = Buffer.from(chunk.data, chunk.base64Encoded ? "base64" : "utf8");
      total += bytes.byteLength;
      if (total > maxOutputBytes) throw outputCap(maxOutputBytes);
      chunks.push(bytes);
      if (chunk.eof) break;
    }
  } finally {
    void session.send("IO.close", { handle }).catch(noop);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

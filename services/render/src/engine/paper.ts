import { CSS_UNITS_PER_INCH, MAX_PAPER_IN, MIN_PAPER_IN, MIN_PRINTABLE_IN, PAPER_INCHES } from "@pressroom/domain";
import { RenderFailure, type ImageFormat, type PrintSettings, type RenderJob, type RenderOutput, type WaitCondition } from "./types";

/** Chromium's default margin when printToPDF is given none (1 cm). */
const DEFAULT_MARGIN_IN = 0.3937;
const CSS_PX_PER_IN = 96;
export const MAX_IMAGE_SIDE = 10_000;

/** A named paper format's portrait size in CSS px (96 per inch), or undefined for a name the engine does not know. */
export function paperPixels(format: string): { width: number; height: number } | undefined {
  const paper = PAPER_INCHES[format.toLowerCase()];
  return paper && { width: Math.round(paper.width * CSS_PX_PER_IN), height: Math.round(paper.height * CSS_PX_PER_IN) };
}

/** "12mm" → inches; "" and "0" → 0. Throws invalid_document on anything else. */
export function cssLengthToInches(value: string, field: string): number {
  const text = value.trim().toLowerCase();
  if (text === "" || text === "0") return 0;
  const match = /^(\d+(?:\.\d+)?|\.\d+)(px|in|cm|mm|pt|pc)?$/.exec(text);
  const perInch = match ? CSS_UNITS_PER_INCH[(match[2] ?? "px") as keyof typeof CSS_UNITS_PER_INCH] : undefined;
  if (!match || perInch === undefined) {
    throw new RenderFailure("invalid_document", `${field} "${value}" is not a length (use px, in, cm, mm, pt or pc)`);
  }
  return Number(match[1]) / perInch;
}

/** Parameters of CDP Page.printToPDF, minus the transfer settings. */
export interface PrintParams {
  paperWidth: number;
  paperHeight: number;
  landscape: boolean;
  marginTop?: number;
  marginRight?: number;
  marginBottom?: number;
  marginLeft?: number;
  displayHeaderFooter: boolean;
  headerTemplate?: string;
  footerTemplate?: string;
  preferCSSPageSize: boolean;
  scale?: number;
  printBackground?: boolean;
  pageRanges?: string;
}

/** What a job needs from a page before and after it loads. */
export interface JobLayout {
  /** Viewport in CSS px: the printable area for PDFs, the image for PNGs. */
  viewport: { width: number; height: number; deviceScaleFactor: number };
  print?: PrintParams;
  /** Printable height in CSS px, for the page-count estimate. */
  pageHeightPx: number;
  /** The CSS media type to emulate; absent: none (print when printing, screen when capturing). */
  media?: "print" | "screen";
  /** Images: the format and background of the capture (absent: an opaque png). */
  capture?: { format: ImageFormat; quality?: number; omitBackground: boolean };
  /** Waited for once the document loaded. */
  waitFor?: WaitCondition;
}

/** What a job with this layout makes. */
export function contentTypeOf(kind: "pdf" | "png", layout: JobLayout): RenderOutput["contentType"] {
  return kind === "pdf" ? "application/pdf" : `image/${layout.capture?.format ?? "png"}`;
}

const BLANK_TEMPLATE = "<span></span>";

/** Checks a job and derives its layout. Throws RenderFailure("invalid_document"). */
export function layoutOf(job: RenderJob): JobLayout {
  if (typeof job.html !== "string") throw new RenderFailure("invalid_document", "html must be a string");
  const ready = job.waitFor ? { waitFor: job.waitFor } : {};
  if (job.kind === "png") return { ...imageLayout(job), ...ready };
  if (job.kind !== "pdf") throw new RenderFailure("invalid_document", `unknown output kind "${String(job.kind)}"`);
  return { ...pdfLayout(job), ...(job.print?.media ? { media: job.print.media } : {}), ...ready };
}

function imageLayout(job: RenderJob): JobLayout {
  const image = job.image;
  if (!image) throw new RenderFailure("invalid_document", "an image render needs a width and a height");
  for (const side of ["width", "height"] as const) {
    const v = image[side];
    if (!Number.isInteger(v) || v < 1 || v > MAX_IMAGE_SIDE) {
      throw new RenderFailure("invalid_document", `image ${side} must be a whole number from 1 to ${MAX_IMAGE_SIDE}`);
    }
  }
  const dsf = image.deviceScaleFactor ?? 1;
  if (dsf !== 1 && dsf !== 2 && dsf !== 3) throw new RenderFailure("invalid_document", "deviceScaleFactor must be 1, 2 or 3");
  const format = image.format ?? "png";
  if (image.omitBackground && format === "jpeg") throw new RenderFailure("invalid_document", "a jpeg has no transparency: use png or webp");
  const quality = format === "png" ? undefined : (image.quality ?? 90);
  if (quality !== undefined && (!Number.isInteger(quality) || quality < 1 || quality > 100)) {
    throw new RenderFailure("invalid_document", "image quality must be a whole number from 1 to 100");
  }
  return {
    viewport: { width: image.width, height: image.height, deviceScaleFactor: dsf },
    pageHeightPx: image.height,
    ...(format === "png" && !image.omitBackground ? {} : { capture: { format, quality, omitBackground: Boolean(image.omitBackground) } }),
  };
}

/** The print settings beyond the paper, checked. */
function printExtras(print: PrintSettings | undefined): Partial<PrintParams> {
  if (!print) return {};
  if (print.scale !== undefined && !(print.scale >= 0.1 && print.scale <= 2)) throw new RenderFailure("invalid_document", "scale must be from 0.1 to 2");
  if (print.pageRanges !== undefined && !/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(print.pageRanges)) {
    throw new RenderFailure("invalid_document", `page_ranges "${print.pageRanges}" is not a list of pages such as "1-3,5"`);
  }
  return {
    ...(print.scale === undefined ? {} : { scale: print.scale }),
    ...(print.printBackground === undefined ? {} : { printBackground: print.printBackground }),
    ...(print.pageRanges === undefined ? {} : { pageRanges: print.pageRanges }),
    ...(print.preferCssPageSize === undefined ? {} : { preferCSSPageSize: print.preferCssPageSize }),
  };
}

function pdfLayout(job: RenderJob): JobLayout & { print: PrintParams } {
  const page = job.page;
  const extras = printExtras(job.print);
  if (!page) {
    // Raw HTML: the document's own @page size wins; A4 with Chromium's default margins otherwise.
    const a4 = PAPER_INCHES.a4!;
    const widthPx = (a4.width - 2 * DEFAULT_MARGIN_IN) * CSS_PX_PER_IN;
    const heightPx = (a4.height - 2 * DEFAULT_MARGIN_IN) * CSS_PX_PER_IN;
    return {
      viewport: { width: Math.round(widthPx), height: Math.round(heightPx), deviceScaleFactor: 1 },
      print: { paperWidth: a4.width, paperHeight: a4.height, landscape: false, displayHeaderFooter: false, preferCSSPageSize: true, ...extras },
      pageHeightPx: heightPx,
    };
  }
  const paper = paperOf(page);
  const margin = {
    top: cssLengthToInches(page.marginTop ?? "", "marginTop"),
    right: cssLengthToInches(page.marginRight ?? "", "marginRight"),
    bottom: cssLengthToInches(page.marginBottom ?? "", "marginBottom"),
    left: cssLengthToInches(page.marginLeft ?? "", "marginLeft"),
  };
  const [width, height] = page.landscape ? [paper.height, paper.width] : [paper.width, paper.height];
  const contentW = width - margin.left - margin.right;
  const contentH = height - margin.top - margin.bottom;
  if (contentW < MIN_PRINTABLE_IN || contentH < MIN_PRINTABLE_IN) {
    throw new RenderFailure("invalid_document", "the margins leave less than half an inch of the page to print on");
  }
  const header = page.headerTemplate ?? "";
  const footer = page.footerTemplate ?? "";
  const displayHeaderFooter = header.trim() !== "" || footer.trim() !== "";
  return {
    viewport: { width: Math.round(contentW * CSS_PX_PER_IN), height: Math.round(contentH * CSS_PX_PER_IN), deviceScaleFactor: 1 },
    print: {
      paperWidth: paper.width,
      paperHeight: paper.height,
      landscape: Boolean(page.landscape),
      marginTop: margin.top,
      marginRight: margin.right,
      marginBottom: margin.bottom,
      marginLeft: margin.left,
      displayHeaderFooter,
      // An empty template would make Chromium print its default date/title/url header.
      ...(displayHeaderFooter ? { headerTemplate: header.trim() ? header : BLANK_TEMPLATE, footerTemplate: footer.trim() ? footer : BLANK_TEMPLATE } : {}),
      preferCSSPageSize: false,
      ...extras,
    },
    pageHeightPx: contentH * CSS_PX_PER_IN,
  };
}

/** The paper of a page, portrait, in inches: a named format, or width and height. */
function paperOf(page: NonNullable<RenderJob["page"]>): { width: number; height: number } {
  if (page.format) {
    const paper = PAPER_INCHES[String(page.format).toLowerCase()];
    if (!paper) throw new RenderFailure("invalid_document", `unknown page format "${page.format}" (use ${Object.keys(PAPER_INCHES).join(", ")})`);
    return paper;
  }
  const width = cssLengthToInches(page.width ?? "", "width");
  const height = cssLengthToInches(page.height ?? "", "height");
  for (const [side, value] of [
    ["width", width],
    ["height", height],
  ] as const) {
    if (!(value >= MIN_PAPER_IN && value <= MAX_PAPER_IN))
      throw new RenderFailure("invalid_document", `the paper ${side} must be from ${MIN_PAPER_IN} to ${MAX_PAPER_IN} inches`);
  }
  return { width, height };
}

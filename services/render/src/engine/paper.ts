import {
  CSS_UNITS_PER_INCH,
  DEFAULT_IMAGE_QUALITY,
  DEFAULT_MARGIN,
  MAX_IMAGE_SIDE,
  MAX_PAPER_IN,
  MIN_PAPER_IN,
  MIN_PRINTABLE_IN,
  PAPER_INCHES,
  type ImageFormat,
  type RenderOptions,
  type WaitFor,
} from "@pressroom/domain";
import { datedTemplate } from "./header-date";
import { regionOf, type CaptureRegion } from "./region";
import type { WaitCondition } from "./readiness";
import { RenderFailure, type RenderJob, type RenderOutput } from "./types";

const CSS_PX_PER_IN = 96;

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
  generateDocumentOutline?: boolean;
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
  /** Images: what of the page is captured beyond the viewport (absent: the viewport). */
  region?: CaptureRegion;
  /** Waited for once the document loaded. */
  waitFor?: WaitCondition;
  /** PDF/UA: the document must say its language (<html lang>); Chromium would otherwise label it with its own locale. */
  needsLanguage?: boolean;
}

/** What a job with this layout makes. */
export function contentTypeOf(kind: "pdf" | "png", layout: JobLayout): RenderOutput["contentType"] {
  return kind === "pdf" ? "application/pdf" : `image/${layout.capture?.format ?? "png"}`;
}

const BLANK_TEMPLATE = "<span></span>";

/** Checks a job and derives its layout. Throws RenderFailure("invalid_document"). */
export function layoutOf(job: RenderJob): JobLayout {
  if (typeof job.html !== "string") throw new RenderFailure("invalid_document", "html must be a string");
  const options = job.options ?? {};
  const waitFor = conditionOf(options.waitFor);
  const ready = waitFor ? { waitFor } : {};
  if (job.kind === "png") return { ...imageLayout(options), ...ready };
  if (job.kind !== "pdf") throw new RenderFailure("invalid_document", `unknown output kind "${String(job.kind)}"`);
  return { ...pdfLayout(options), ...(options.media ? { media: options.media } : {}), ...ready };
}

/** The one condition of a waitFor, if any. */
function conditionOf(wait: WaitFor | undefined): WaitCondition | undefined {
  if (!wait) return undefined;
  const bound = wait.timeoutMs ? { timeoutMs: wait.timeoutMs } : {};
  if (wait.selector !== undefined) return { selector: wait.selector, ...bound };
  if (wait.expression !== undefined) return { expression: wait.expression, ...bound };
  if (wait.networkIdle) return { networkIdle: true, ...bound };
  if (wait.delayMs !== undefined) return { delayMs: wait.delayMs };
  return undefined;
}

function imageLayout(options: RenderOptions): JobLayout {
  const { imageWidth: width, imageHeight: height } = options;
  if (width === undefined || height === undefined) throw new RenderFailure("invalid_document", "an image render needs a width and a height");
  for (const [side, v] of [
    ["width", width],
    ["height", height],
  ] as const) {
    if (!Number.isInteger(v) || v < 1 || v > MAX_IMAGE_SIDE) {
      throw new RenderFailure("invalid_document", `image ${side} must be a whole number from 1 to ${MAX_IMAGE_SIDE}`);
    }
  }
  const dsf = options.deviceScaleFactor ?? 1;
  if (dsf !== 1 && dsf !== 2 && dsf !== 3) throw new RenderFailure("invalid_document", "deviceScaleFactor must be 1, 2 or 3");
  const format = options.imageFormat ?? "png";
  if (options.omitBackground && format === "jpeg") throw new RenderFailure("invalid_document", "a jpeg has no transparency: use png or webp");
  const quality = format === "png" ? undefined : (options.quality ?? DEFAULT_IMAGE_QUALITY);
  if (quality !== undefined && (!Number.isInteger(quality) || quality < 1 || quality > 100)) {
    throw new RenderFailure("invalid_document", "image quality must be a whole number from 1 to 100");
  }
  const region = regionOf(options);
  return {
    viewport: { width, height, deviceScaleFactor: dsf },
    pageHeightPx: height,
    ...(format === "png" && !options.omitBackground ? {} : { capture: { format, quality, omitBackground: Boolean(options.omitBackground) } }),
    ...(region ? { region } : {}),
  };
}

/** The print settings beyond the paper, checked. */
function printExtras(options: RenderOptions): Partial<PrintParams> {
  if (options.scale !== undefined && !(options.scale >= 0.1 && options.scale <= 2)) throw new RenderFailure("invalid_document", "scale must be from 0.1 to 2");
  if (options.pageRanges !== undefined && !/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(options.pageRanges)) {
    throw new RenderFailure("invalid_document", `page_ranges "${options.pageRanges}" is not a list of pages such as "1-3,5"`);
  }
  return {
    ...(options.scale === undefined ? {} : { scale: options.scale }),
    ...(options.printBackground === undefined ? {} : { printBackground: options.printBackground }),
    ...(options.pageRanges === undefined ? {} : { pageRanges: options.pageRanges }),
    ...(options.outline ? { generateDocumentOutline: true } : {}),
  };
}

/**
 * The print of a PDF: its paper (A4 when the options give none, the document's CSS @page size
 * then preferred unless they say otherwise), margins (1 cm for a side not given), orientation,
 * header and footer, and what printExtras adds.
 */
function pdfLayout(options: RenderOptions): JobLayout & { print: PrintParams } {
  const paper = paperOf(options);
  const side = (value: string | undefined, name: string) => cssLengthToInches(value ?? DEFAULT_MARGIN, name);
  const margin = {
    top: side(options.margin?.top, "marginTop"),
    right: side(options.margin?.right, "marginRight"),
    bottom: side(options.margin?.bottom, "marginBottom"),
    left: side(options.margin?.left, "marginLeft"),
  };
  const landscape = Boolean(options.landscape);
  const [width, height] = landscape ? [paper.height, paper.width] : [paper.width, paper.height];
  const contentW = width - margin.left - margin.right;
  const contentH = height - margin.top - margin.bottom;
  if (contentW < MIN_PRINTABLE_IN || contentH < MIN_PRINTABLE_IN) {
    throw new RenderFailure("invalid_document", "the margins leave less than half an inch of the page to print on");
  }
  const header = datedTemplate(options.headerHtml ?? "", options);
  const footer = datedTemplate(options.footerHtml ?? "", options);
  const displayHeaderFooter = header.trim() !== "" || footer.trim() !== "";
  return {
    viewport: { width: Math.round(contentW * CSS_PX_PER_IN), height: Math.round(contentH * CSS_PX_PER_IN), deviceScaleFactor: 1 },
    print: {
      paperWidth: paper.width,
      paperHeight: paper.height,
      landscape,
      marginTop: margin.top,
      marginRight: margin.right,
      marginBottom: margin.bottom,
      marginLeft: margin.left,
      displayHeaderFooter,
      // An empty template would make Chromium print its default date/title/url header.
      ...(displayHeaderFooter ? { headerTemplate: header.trim() ? header : BLANK_TEMPLATE, footerTemplate: footer.trim() ? footer : BLANK_TEMPLATE } : {}),
      preferCSSPageSize: options.preferCssPageSize ?? !paper.given,
      ...printExtras(options),
    },
    pageHeightPx: contentH * CSS_PX_PER_IN,
    ...(options.pdfua ? { needsLanguage: true } : {}),
  };
}

/** The paper of a page, portrait, in inches: a named format, or width and height, or (not given) A4. */
function paperOf(options: RenderOptions): { width: number; height: number; given: boolean } {
  if (options.format) {
    const paper = PAPER_INCHES[options.format.toLowerCase()];
    if (!paper) throw new RenderFailure("invalid_document", `unknown page format "${options.format}" (use ${Object.keys(PAPER_INCHES).join(", ")})`);
    return { ...paper, given: true };
  }
  if (options.width === undefined && options.height === undefined) return { ...PAPER_INCHES.a4!, given: false };
  const width = cssLengthToInches(options.width ?? "", "width");
  const height = cssLengthToInches(options.height ?? "", "height");
  for (const [side, value] of [
    ["width", width],
    ["height", height],
  ] as const) {
    if (!(value >= MIN_PAPER_IN && value <= MAX_PAPER_IN))
      throw new RenderFailure("invalid_document", `the paper ${side} must be from ${MIN_PAPER_IN} to ${MAX_PAPER_IN} inches`);
  }
  return { width, height, given: true };
}

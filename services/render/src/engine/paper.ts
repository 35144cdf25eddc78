import { RenderFailure, type RenderJob } from "./types";

/** Paper sizes in inches (portrait), as puppeteer and Chromium's print dialog know them. */
const PAPER: Record<string, { width: number; height: number }> = {
  letter: { width: 8.5, height: 11 },
  legal: { width: 8.5, height: 14 },
  tabloid: { width: 11, height: 17 },
  ledger: { width: 17, height: 11 },
  a0: { width: 33.1102, height: 46.811 },
  a1: { width: 23.3858, height: 33.1102 },
  a2: { width: 16.5354, height: 23.3858 },
  a3: { width: 11.6929, height: 16.5354 },
  a4: { width: 8.2677, height: 11.6929 },
  a5: { width: 5.8268, height: 8.2677 },
  a6: { width: 4.1339, height: 5.8268 },
};

/** Chromium's default margin when printToPDF is given none (1 cm). */
const DEFAULT_MARGIN_IN = 0.3937;
const CSS_PX_PER_IN = 96;
/** Units per inch. */
const PER_INCH: Record<string, number> = { px: 96, in: 1, cm: 2.54, mm: 25.4, pt: 72, pc: 6 };
export const MAX_IMAGE_SIDE = 10_000;

/** "12mm" → inches; "" and "0" → 0. Throws invalid_document on anything else. */
export function cssLengthToInches(value: string, field: string): number {
  const text = value.trim().toLowerCase();
  if (text === "" || text === "0") return 0;
  const match = /^(\d+(?:\.\d+)?|\.\d+)(px|in|cm|mm|pt|pc)?$/.exec(text);
  const perInch = match ? PER_INCH[match[2] ?? "px"] : undefined;
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
}

/** What a job needs from a page before and after it loads. */
export interface JobLayout {
  /** Viewport in CSS px: the printable area for PDFs, the image for PNGs. */
  viewport: { width: number; height: number; deviceScaleFactor: number };
  print?: PrintParams;
  /** Printable height in CSS px, for the page-count estimate. */
  pageHeightPx: number;
}

const BLANK_TEMPLATE = "<span></span>";

/** Checks a job and derives its layout. Throws RenderFailure("invalid_document"). */
export function layoutOf(job: RenderJob): JobLayout {
  if (typeof job.html !== "string") throw new RenderFailure("invalid_document", "html must be a string");
  if (job.kind === "png") {
    const image = job.image;
    if (!image) throw new RenderFailure("invalid_document", "an image render needs a width and a height");
    for (const side of ["width", "height"] as const) {
      const v = image[side];
      if (!Number.isInteger(v) || v < 1 || v > MAX_IMAGE_SIDE) {
        throw new RenderFailure("invalid_document", `image ${side} must be a whole number from 1 to ${MAX_IMAGE_SIDE}`);
      }
    }
    const dsf = image.deviceScaleFactor ?? 1;
    if (dsf !== 1 && dsf !== 2) throw new RenderFailure("invalid_document", "deviceScaleFactor must be 1 or 2");
    return { viewport: { width: image.width, height: image.height, deviceScaleFactor: dsf }, pageHeightPx: image.height };
  }
  if (job.kind !== "pdf") throw new RenderFailure("invalid_document", `unknown output kind "${String(job.kind)}"`);

  const page = job.page;
  if (!page) {
    // Raw HTML: the document's own @page size wins; A4 with Chromium's default margins otherwise.
    const a4 = PAPER.a4!;
    const widthPx = (a4.width - 2 * DEFAULT_MARGIN_IN) * CSS_PX_PER_IN;
    const heightPx = (a4.height - 2 * DEFAULT_MARGIN_IN) * CSS_PX_PER_IN;
    return {
      viewport: { width: Math.round(widthPx), height: Math.round(heightPx), deviceScaleFactor: 1 },
      print: { paperWidth: a4.width, paperHeight: a4.height, landscape: false, displayHeaderFooter: false, preferCSSPageSize: true },
      pageHeightPx: heightPx,
    };
  }
  const paper = PAPER[String(page.format).toLowerCase()];
  if (!paper) throw new RenderFailure("invalid_document", `unknown page format "${page.format}" (use ${Object.keys(PAPER).join(", ")})`);
  const margin = {
    top: cssLengthToInches(page.marginTop ?? "", "marginTop"),
    right: cssLengthToInches(page.marginRight ?? "", "marginRight"),
    bottom: cssLengthToInches(page.marginBottom ?? "", "marginBottom"),
    left: cssLengthToInches(page.marginLeft ?? "", "marginLeft"),
  };
  const [width, height] = page.landscape ? [paper.height, paper.width] : [paper.width, paper.height];
  const contentW = width - margin.left - margin.right;
  const contentH = height - margin.top - margin.bottom;
  if (contentW < 0.5 || contentH < 0.5) {
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
    },
    pageHeightPx: contentH * CSS_PX_PER_IN,
  };
}

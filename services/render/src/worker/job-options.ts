import type { jobEventsV1 } from "@pressroom/contracts";
import { DEFAULT_MARGIN, DEFAULT_URL_VIEWPORT } from "@pressroom/domain";
import type { PageSettings, PrintSettings, RenderJob, WaitCondition } from "../engine";

/**
 * A job's options (the request's, in the job contract) applied to what the
 * engine renders: the request's page settings over the template's, how the
 * PDF is printed, when the page is ready, how an image is made. Pure: the
 * header and footer arrive already filled with the request's data.
 */

/** Whether the options say anything about the paper, its margins or its header and footer. */
function touchesPage(options: jobEventsV1.RenderOptions): boolean {
  return (
    options.format !== undefined ||
    options.width !== undefined ||
    options.landscape !== undefined ||
    options.margin !== undefined ||
    options.headerHtml !== undefined ||
    options.footerHtml !== undefined
  );
}

/**
 * The page settings a PDF job prints with: the template's (or, for raw HTML
 * and a url, A4 with 1 cm margins) with every option the request gave over
 * them. Undefined when neither has any: the document's CSS @page decides.
 */
export function pageOf(
  template: PageSettings | undefined,
  options: jobEventsV1.RenderOptions | undefined,
  headerFooter: { header?: string; footer?: string },
): PageSettings | undefined {
  if (!options || !touchesPage(options)) return template;
  const base: PageSettings = template ?? {
    format: "A4",
    landscape: false,
    marginTop: DEFAULT_MARGIN,
    marginRight: DEFAULT_MARGIN,
    marginBottom: DEFAULT_MARGIN,
    marginLeft: DEFAULT_MARGIN,
    headerTemplate: "",
    footerTemplate: "",
  };
  const margin = options.margin;
  return {
    ...base,
    ...(options.format !== undefined ? { format: options.format, width: undefined, height: undefined } : {}),
    ...(options.width !== undefined ? { format: "", width: options.width, height: options.height } : {}),
    landscape: options.landscape ?? base.landscape,
    marginTop: margin?.top ?? base.marginTop,
    marginRight: margin?.right ?? base.marginRight,
    marginBottom: margin?.bottom ?? base.marginBottom,
    marginLeft: margin?.left ?? base.marginLeft,
    headerTemplate: headerFooter.header ?? base.headerTemplate,
    footerTemplate: headerFooter.footer ?? base.footerTemplate,
  };
}

/**
 * How the PDF is printed beyond its paper. For raw HTML and a url without a
 * size in the request, the document's CSS @page size keeps winning unless
 * the request says otherwise.
 */
export function printOf(options: jobEventsV1.RenderOptions | undefined, fromTemplate: boolean): PrintSettings | undefined {
  if (!options) return undefined;
  const sized = options.format !== undefined || options.width !== undefined;
  const preferCssPageSize = options.preferCssPageSize ?? (fromTemplate || sized ? undefined : true);
  const print: PrintSettings = {
    ...(options.scale !== undefined ? { scale: options.scale } : {}),
    ...(options.printBackground !== undefined ? { printBackground: options.printBackground } : {}),
    ...(options.pageRanges !== undefined ? { pageRanges: options.pageRanges } : {}),
    ...(preferCssPageSize !== undefined ? { preferCssPageSize } : {}),
    ...(options.media === "print" || options.media === "screen" ? { media: options.media } : {}),
  };
  return Object.keys(print).length ? print : undefined;
}

/** The one readiness condition of the options, if any. */
export function waitConditionOf(options: jobEventsV1.RenderOptions | undefined): WaitCondition | undefined {
  const wait = options?.waitFor;
  if (!wait) return undefined;
  if (wait.selector !== undefined) return { selector: wait.selector };
  if (wait.expression !== undefined) return { expression: wait.expression };
  if (wait.networkIdle) return { networkIdle: true };
  if (wait.delayMs !== undefined) return { delayMs: wait.delayMs };
  return undefined;
}

/** An image job's size, format and background: the template's size (or the request's, for a url) and the request's format. */
export function imageOf(
  template: { width: number; height: number; deviceScaleFactor: 1 | 2 } | undefined,
  options: jobEventsV1.RenderOptions | undefined,
): RenderJob["image"] {
  const size = template ?? {
    width: options?.imageWidth ?? DEFAULT_URL_VIEWPORT.width,
    height: options?.imageHeight ?? DEFAULT_URL_VIEWPORT.height,
    deviceScaleFactor: (options?.deviceScaleFactor ?? 1) as 1 | 2 | 3,
  };
  const format = options?.imageFormat === "jpeg" || options?.imageFormat === "webp" ? options.imageFormat : "png";
  return {
    ...size,
    format,
    ...(options?.quality !== undefined ? { quality: options.quality } : {}),
    ...(options?.omitBackground ? { omitBackground: true } : {}),
  };
}

import { MAX_IMAGE_SIDE, type Clip, type RenderOptions } from "@pressroom/domain";
import type { CDPSession } from "puppeteer-core";
import { RenderFailure } from "./types";

/** What of the page a screenshot shows beyond its viewport: the whole page, one element, or a rectangle (CSS pixels). */
export type CaptureRegion = { fullPage: true } | { selector: string } | { clip: Clip };

/** The region an image's options ask for (at most one), checked; undefined: the viewport. */
export function regionOf(options: RenderOptions): CaptureRegion | undefined {
  const asked = [options.fullPage === true, options.selector !== undefined, options.clip !== undefined].filter(Boolean).length;
  if (asked > 1) throw new RenderFailure("invalid_document", "give at most one of full_page, selector and clip");
  if (options.fullPage) return { fullPage: true };
  if (options.selector !== undefined) {
    if (options.selector.trim() === "") throw new RenderFailure("invalid_document", "options.selector must not be empty");
    return { selector: options.selector };
  }
  if (options.clip) return { clip: checkedClip(options.clip, "options.clip") };
  return undefined;
}

function checkedClip(clip: Clip, what: string): Clip {
  const { x, y, width, height } = clip;
  if (![x, y].every((v) => Number.isFinite(v) && v >= 0)) throw new RenderFailure("invalid_document", `${what}: x and y must be 0 or more`);
  if (![width, height].every((v) => Number.isFinite(v) && v > 0 && v <= MAX_IMAGE_SIDE)) {
    throw new RenderFailure("invalid_document", `${what}: width and height must be more than 0 and at most ${MAX_IMAGE_SIDE} CSS pixels`);
  }
  return { x, y, width, height };
}

/** Finds the element and its box in page coordinates (CSS pixels): null when none matches, "invalid" for a selector that is not CSS. */
const ELEMENT_BOX = `(selector) => {
  let element;
  try { element = document.querySelector(selector); } catch { return "invalid"; }
  if (!element) return null;
  const box = element.getBoundingClientRect();
  return { x: box.left + window.scrollX, y: box.top + window.scrollY, width: box.width, height: box.height };
}`;

/** The rectangle of the page a capture takes, in CSS pixels: the viewport's, or the region's (which may lie beyond the viewport). */
export async function captureClip(session: CDPSession, viewport: { width: number; height: number }, region: CaptureRegion | undefined): Promise<Clip> {
  if (!region) return { x: 0, y: 0, width: viewport.width, height: viewport.height };
  if ("clip" in region) return region.clip;
  if ("fullPage" in region) {
    const { cssContentSize } = await session.send("Page.getLayoutMetrics");
    const height = Math.max(viewport.height, Math.ceil(cssContentSize.height));
    if (height > MAX_IMAGE_SIDE) {
      throw new RenderFailure("invalid_document", `options.full_page: the page is ${height} CSS pixels tall, more than ${MAX_IMAGE_SIDE} (the image size cap)`);
    }
    return { x: 0, y: 0, width: viewport.width, height };
  }
  const named = `options.selector ${JSON.stringify(region.selector)}`;
  const { result, exceptionDetails } = await session.send("Runtime.evaluate", {
    expression: `(${ELEMENT_BOX})(${JSON.stringify(region.selector)})`,
    returnByValue: true,
  });
  const box = exceptionDetails ? undefined : (result.value as Clip | "invalid" | null);
  if (box === "invalid") throw new RenderFailure("invalid_document", `${named} is not a valid CSS selector`);
  if (!box) throw new RenderFailure("invalid_document", `${named} matches no element in the page`);
  if (box.width < 1 || box.height < 1) throw new RenderFailure("invalid_document", `${named} matches an element with no size (hidden, or empty)`);
  if (box.width > MAX_IMAGE_SIDE || box.height > MAX_IMAGE_SIDE) {
    throw new RenderFailure("invalid_document", `${named} matches an element larger than ${MAX_IMAGE_SIDE} CSS pixels (the image size cap)`);
  }
  return box;
}

import { z } from "@pressroom/platform";
import { CSS_UNITS_PER_INCH, MAX_PAPER_IN, MIN_PAPER_IN, MIN_PRINTABLE_IN, PAPER_FORMATS, PAPER_INCHES, paperFormatName } from "@pressroom/domain";

/**
 * Paper, as a render request's options and a template's page settings give
 * it: the named formats, CSS lengths, and the bounds the render engine holds
 * a page to (services/render/src/engine/paper.ts), so the gateway refuses
 * with 422 PAYLOAD_INVALID what the engine would fail.
 */

/** A named paper format, in any case ("a4", "LETTER"), kept as PAPER_FORMATS spells it. */
export const paperFormat = () =>
  z
    .string({ error: `must be one of ${PAPER_FORMATS.join(", ")}` })
    .refine((name) => paperFormatName(name) !== undefined, `must be one of ${PAPER_FORMATS.join(", ")} (in any case)`)
    .overwrite((name) => paperFormatName(name) ?? name)
    .meta({ description: `A paper format, in any case: ${PAPER_FORMATS.join(", ")}.`, examples: ["A4", "letter"] });

const UNITS = Object.keys(CSS_UNITS_PER_INCH).join(", ");
const CSS_LENGTH = /^(0|(\d+(\.\d+)?|\.\d+)(mm|cm|in|px|pt|pc))$/;

/** A CSS length in the units above, or "0". */
export const cssLength = (what: string) =>
  z
    .string({ error: `must be a CSS length such as "20mm"` })
    .max(32, "must be at most 32 characters")
    .regex(CSS_LENGTH, `must be a CSS length in ${UNITS} (e.g. "20mm"), or "0"`)
    .meta({ description: `${what}: a CSS length in ${UNITS}, e.g. "20mm" or "8.5in".`, examples: ["20mm"] });

/** A CSS length cssLength accepted, in inches. */
export function inches(length: string): number {
  const match = /^([\d.]+)([a-z]+)$/.exec(length);
  return match ? Number(match[1]) / CSS_UNITS_PER_INCH[match[2] as keyof typeof CSS_UNITS_PER_INCH] : 0;
}

export interface PageShape {
  format?: string;
  width?: string;
  height?: string;
  landscape?: boolean;
  margin?: { top?: string; right?: string; bottom?: string; left?: string };
}

/**
 * What is wrong with a page's paper and margins, as far as the request alone
 * says (a template's paper, margins and orientation are not known here): a
 * width or height outside 1–200 in; margins that leave less than half an
 * inch to print on, reckoned with a side left out as 0 on the paper given
 * (the largest paper when none is), in either orientation unless one is given.
 */
export function pageProblems(page: PageShape): { path: string[]; message: string }[] {
  const problems: { path: string[]; message: string }[] = [];
  for (const side of ["width", "height"] as const) {
    const value = page[side];
    if (value === undefined) continue;
    const size = inches(value);
    if (size < MIN_PAPER_IN || size > MAX_PAPER_IN) problems.push({ path: [side], message: `must be from ${MIN_PAPER_IN} to ${MAX_PAPER_IN} inches` });
  }
  if (problems.length > 0 || !page.margin) return problems;
  const paper = page.format
    ? PAPER_INCHES[page.format.toLowerCase()]!
    : page.width !== undefined && page.height !== undefined
      ? { width: inches(page.width), height: inches(page.height) }
      : { width: MAX_PAPER_IN, height: MAX_PAPER_IN };
  const margin = (side: "top" | "right" | "bottom" | "left") => inches(page.margin?.[side] ?? "0");
  const across = margin("left") + margin("right");
  const down = margin("top") + margin("bottom");
  const orientations = page.landscape === undefined ? [false, true] : [page.landscape];
  const fits = orientations.some((landscape) => {
    const [width, height] = landscape ? [paper.height, paper.width] : [paper.width, paper.height];
    return width - across >= MIN_PRINTABLE_IN && height - down >= MIN_PRINTABLE_IN;
  });
  if (!fits) problems.push({ path: ["margin"], message: `must leave at least ${MIN_PRINTABLE_IN} inch of the paper to print on, across and down` });
  return problems;
}

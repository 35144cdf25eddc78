import { z } from "@pressroom/platform";

/**
 * Paper, as a render request's options and a template's page settings give
 * it: the named formats, CSS lengths, and the bounds the render engine holds
 * a page to (services/render/src/engine/paper.ts), so the gateway refuses
 * with 422 PAYLOAD_INVALID what the engine would fail.
 */

const PAPER_FORMATS = ["A3", "A4", "A5", "Letter", "Legal", "Tabloid"] as const;
type PaperFormat = (typeof PAPER_FORMATS)[number];

/** Portrait sizes in inches, as the render engine knows them. */
const FORMAT_INCHES: Record<PaperFormat, { width: number; height: number }> = {
  A3: { width: 11.6929, height: 16.5354 },
  A4: { width: 8.2677, height: 11.6929 },
  A5: { width: 5.8268, height: 8.2677 },
  Letter: { width: 8.5, height: 11 },
  Legal: { width: 8.5, height: 14 },
  Tabloid: { width: 11, height: 17 },
};

/** A named paper format. */
export const paperFormat = () => z.enum(PAPER_FORMATS, { error: `must be one of ${PAPER_FORMATS.join(", ")}` });

/** The bounds of a paper side given as width or height, in inches. */
export const MIN_PAPER_IN = 1;
export const MAX_PAPER_IN = 200;
/** What the margins must leave to print on, across and down, in inches. */
export const MIN_PRINTABLE_IN = 0.5;

const PER_INCH = { mm: 25.4, cm: 2.54, in: 1, px: 96, pt: 72, pc: 6 } as const;
const UNITS = Object.keys(PER_INCH).join(", ");
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
  return match ? Number(match[1]) / PER_INCH[match[2] as keyof typeof PER_INCH] : 0;
}

export interface PageShape {
  format?: PaperFormat;
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
    ? FORMAT_INCHES[page.format]
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

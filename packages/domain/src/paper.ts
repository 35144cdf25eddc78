/**
 * Paper as Pressroom prints it: the gateway refuses with these what the render
 * engine could not print, and the engine prints with the same numbers.
 */

/** Paper sizes in inches (portrait), by lower-case name, as puppeteer and Chromium's print dialog know them. */
export const PAPER_INCHES: Readonly<Record<string, { width: number; height: number }>> = {
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
  b4: { width: 9.8425, height: 13.8976 },
  b5: { width: 6.9291, height: 9.8425 },
  executive: { width: 7.25, height: 10.5 },
};

/** The formats the public API offers (render options and a template's page). */
export const PAPER_FORMATS = ["A0", "A1", "A2", "A3", "A4", "A5", "A6", "B4", "B5", "Letter", "Legal", "Tabloid", "Ledger", "Executive"] as const;

/** A paper format's name as PAPER_FORMATS spells it, whatever its case; undefined for another name. */
export function paperFormatName(name: string): (typeof PAPER_FORMATS)[number] | undefined {
  return PAPER_FORMATS.find((format) => format.toLowerCase() === name.toLowerCase());
}

/** CSS length units per inch. */
export const CSS_UNITS_PER_INCH = { mm: 25.4, cm: 2.54, in: 1, px: 96, pt: 72, pc: 6 } as const;

/** The bounds of a paper side given as width or height, in inches (A0's long side is 46.8). */
export const MIN_PAPER_IN = 1;
export const MAX_PAPER_IN = 200;
/** What the margins must leave to print on, across and down, in inches. */
export const MIN_PRINTABLE_IN = 0.5;

/**
 * A template preview's size in pixels, for a page to keep its room while the image loads: a png
 * template's own width and height, a pdf template's paper at 96 pixels to the inch (landscape
 * turned; A4 without a page or for a name not known), to a pixel of the png (the page Chromium
 * prints is not a whole number of pixels: its A4 is 794.56 × 1122.56).
 */
export function previewPixels(template: { width?: number; height?: number; page?: { format: string; landscape: boolean } | null }): {
  width: number;
  height: number;
} {
  if (template.width !== undefined && template.height !== undefined) return { width: template.width, height: template.height };
  const paper = PAPER_INCHES[(template.page?.format ?? "").toLowerCase()] ?? PAPER_INCHES.a4!;
  const [width, height] = [paper.width, paper.height].map((inches) => Math.round(inches * CSS_UNITS_PER_INCH.px));
  return template.page?.landscape ? { width: height!, height: width! } : { width: width!, height: height! };
}

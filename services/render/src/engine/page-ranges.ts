/**
 * What Chromium is asked to print: the job's own `pageRanges` intersected with the page cap, so that
 * a job's ranges never lift it (issue 39). Without ranges, pages 1 to cap + 1. With them, the pages
 * they ask for up to the cap, and page cap + 1 besides: a document that has it is over the cap, which
 * shows as one page more printed than the ranges ask for (`wanted`), whatever pages they ask for.
 */
export interface CappedRanges {
  /** Chromium's `pageRanges`. */
  print: string;
  /** Pages the job's ranges ask for within the cap; more printed means the document has more than the cap. */
  wanted: number;
}

export function capPageRanges(ranges: string | undefined, maxPages: number): CappedRanges {
  if (ranges === undefined) return { print: `1-${maxPages + 1}`, wanted: maxPages };
  const within: [number, number][] = [];
  for (const part of ranges.split(",")) {
    const [from, to = from] = part.split("-").map(Number) as [number, number?];
    const last = Math.min(to, maxPages);
    if (from >= 1 && from <= last) within.push([from, last]);
  }
  within.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [from, to] of within) {
    const previous = merged.at(-1);
    if (previous && from <= previous[1] + 1) previous[1] = Math.max(previous[1], to);
    else merged.push([from, to]);
  }
  const wanted = merged.reduce((sum, [from, to]) => sum + to - from + 1, 0);
  const print = [...merged.map(([from, to]) => (from === to ? `${from}` : `${from}-${to}`)), `${maxPages + 1}`].join(",");
  return { print, wanted };
}

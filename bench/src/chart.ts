import type { RunStats } from "./stats";

export interface CompareRow {
  doc: string;
  concurrency: number;
  floor: Pick<RunStats, "p50" | "p99" | "throughput">;
  pressroom: Pick<RunStats, "p50" | "p99" | "throughput">;
  jsreport: Pick<RunStats, "p50" | "p99" | "throughput">;
}

const PANEL_W = 360;
const PANEL_H = 220;
const MARGIN = { left: 58, right: 24, top: 34, bottom: 40 };
const COLORS = { floor: "#7a7a7a", pressroom: "#1f6feb", jsreport: "#d4760a" };

const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A round axis maximum above `value`: 1, 2 or 5 times a power of ten. */
export function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((f) => f * power).find((step) => step >= value) ?? 10 * power;
}

interface Series {
  label: string;
  color: string;
  dashed: boolean;
  points: number[];
}

/** Where a panel's points lie along x, and what its axis shows. */
interface XAxis {
  /** Each point's place, from 0 (left) to 1 (right). */
  at: number[];
  /** Each point's name in its tooltip ("c=4", "at 2,500 renders"). */
  names: string[];
  ticks: { at: number; label: string }[];
  /** A shaded band from the left edge to this place (a warm-up). */
  shadedTo?: number;
  /** Dotted vertical lines across the plot at these places (new browsers). */
  marks?: number[];
}

/** Concurrency levels, evenly spaced. */
function levelsAxis(levels: number[]): XAxis {
  const at = levels.map((_, i) => (levels.length === 1 ? 0.5 : i / (levels.length - 1)));
  const names = levels.map((level) => `c=${level}`);
  return { at, names, ticks: names.map((label, i) => ({ at: at[i]!, label })) };
}

/** One line chart: y from 0 to a round maximum. */
function panel(x: number, y: number, title: string, unit: string, axis: XAxis, series: Series[]): string {
  const innerW = PANEL_W - MARGIN.left - MARGIN.right;
  const innerH = PANEL_H - MARGIN.top - MARGIN.bottom;
  const max = niceMax(Math.max(...series.flatMap((s) => s.points)));
  const px = (at: number) => MARGIN.left + at * innerW;
  const py = (v: number) => MARGIN.top + innerH - (v / max) * innerH;
  const parts = [`<g transform="translate(${x},${y})">`, `<text x="${MARGIN.left}" y="20" class="title">${escape(title)}</text>`];
  for (let t = 0; t <= 4; t++) {
    const v = (max * t) / 4;
    parts.push(`<line x1="${MARGIN.left}" x2="${PANEL_W - MARGIN.right}" y1="${py(v)}" y2="${py(v)}" class="grid"/>`);
    parts.push(`<text x="${MARGIN.left - 6}" y="${py(v) + 4}" class="tick" text-anchor="end">${Number(v.toPrecision(3))}${unit}</text>`);
  }
  for (const tick of axis.ticks)
    parts.push(`<text x="${px(tick.at)}" y="${PANEL_H - MARGIN.bottom + 16}" class="tick" text-anchor="middle">${escape(tick.label)}</text>`);
  if (axis.shadedTo) parts.push(`<rect x="${px(0)}" y="${py(max)}" width="${(px(axis.shadedTo) - px(0)).toFixed(1)}" height="${innerH}" class="shade"/>`);
  for (const mark of axis.marks ?? []) parts.push(`<line x1="${px(mark).toFixed(1)}" x2="${px(mark).toFixed(1)}" y1="${py(max)}" y2="${py(0)}" class="mark"/>`);
  for (const s of series) {
    const points = s.points.map((v, i) => `${px(axis.at[i]!).toFixed(1)},${py(v).toFixed(1)}`).join(" ");
    parts.push(`<polyline points="${points}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 4"' : ""}/>`);
    s.points.forEach((v, i) =>
      parts.push(
        `<circle cx="${px(axis.at[i]!).toFixed(1)}" cy="${py(v).toFixed(1)}" r="3" fill="${s.color}"><title>${escape(`${s.label} ${axis.names[i]}: ${Number(v.toPrecision(3))}${unit}`)}</title></circle>`,
      ),
    );
  }
  parts.push("</g>");
  return parts.join("\n");
}

/** An SVG page: its styles, a white background, then `body` and the caption at its foot. */
function page(width: number, height: number, body: string[], caption: string): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    "<style>.title{font-size:13px;font-weight:bold}.tick{font-size:10px;fill:#555}.grid{stroke:#e5e5e5}.mark{stroke:#999;stroke-dasharray:2 3}.shade{fill:#f2f2f2}.legend{font-size:12px}.caption{font-size:10px;fill:#777}</style>",
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    ...body,
    `<text x="16" y="${height - 8}" class="caption">${escape(caption)}</text>`,
    "</svg>",
    "",
  ].join("\n");
}

/** A legend entry: a short line in the series' style, and its label. */
function legendEntry(x: number, y: number, label: string, color: string, dashed: boolean): string {
  return (
    `<line x1="${x}" x2="${x + 24}" y1="${y}" y2="${y}" stroke="${color}" stroke-width="2"${dashed ? ' stroke-dasharray="5 4"' : ""}/>\n` +
    `<text x="${x + 30}" y="${y + 4}" class="legend">${escape(label)}</text>`
  );
}

/**
 * The compare run as an SVG: per document, latency p50 (solid) and p99
 * (dashed), and throughput, by concurrency, for the Chromium floor (grey),
 * Pressroom end to end (blue) and jsreport (orange, p50 only).
 */
export function compareChart(rows: CompareRow[], caption: string): string {
  const docs = [...new Set(rows.map((r) => r.doc))];
  const width = PANEL_W * 2;
  const legendH = 58;
  const height = legendH + docs.length * PANEL_H + 24;
  const parts: string[] = [];
  const legend: [string, string, boolean][] = [
    ["floor p50 / throughput", COLORS.floor, false],
    ["floor p99", COLORS.floor, true],
    ["Pressroom p50 / throughput", COLORS.pressroom, false],
    ["Pressroom p99", COLORS.pressroom, true],
    ["jsreport p50 / throughput", COLORS.jsreport, false],
  ];
  legend.forEach(([label, color, dashed], i) => parts.push(legendEntry([16, 196, 336, 546, 16][i]!, i < 4 ? 20 : 40, label, color, dashed)));
  docs.forEach((doc, d) => {
    const mine = rows.filter((r) => r.doc === doc).sort((a, b) => a.concurrency - b.concurrency);
    const axis = levelsAxis(mine.map((r) => r.concurrency));
    const y = legendH + d * PANEL_H;
    parts.push(
      panel(0, y, `${doc}: latency`, " ms", axis, [
        { label: "floor p50", color: COLORS.floor, dashed: false, points: mine.map((r) => r.floor.p50) },
        { label: "floor p99", color: COLORS.floor, dashed: true, points: mine.map((r) => r.floor.p99) },
        { label: "Pressroom p50", color: COLORS.pressroom, dashed: false, points: mine.map((r) => r.pressroom.p50) },
        { label: "Pressroom p99", color: COLORS.pressroom, dashed: true, points: mine.map((r) => r.pressroom.p99) },
        { label: "jsreport p50", color: COLORS.jsreport, dashed: false, points: mine.map((r) => r.jsreport.p50) },
      ]),
      panel(PANEL_W, y, `${doc}: throughput`, "/s", axis, [
        { label: "floor", color: COLORS.floor, dashed: false, points: mine.map((r) => r.floor.throughput) },
        { label: "Pressroom", color: COLORS.pressroom, dashed: false, points: mine.map((r) => r.pressroom.throughput) },
        { label: "jsreport", color: COLORS.jsreport, dashed: false, points: mine.map((r) => r.jsreport.throughput) },
      ]),
    );
  });
  return page(width, height, parts, caption);
}

/** One memory sample as the chart draws it: after `renders` renders, in MiB. */
export interface MemoryPoint {
  renders: number;
  worker: { rssMiB: number; pssMiB: number };
  chromium: { rssMiB: number; pssMiB: number };
  chromiumProcesses: number;
  /** Chromium's renderer processes (windows): their count. */
  renderers: number;
}

/**
 * The memory run as an SVG, by renders done: the render worker's and its Chromium's PSS (solid)
 * and RSS (dashed; Chromium's summed over its processes), and Chromium's process and renderer
 * counts; the warm-up shaded, a dotted line at each sample that saw a new browser.
 */
export function memoryChart(points: MemoryPoint[], warmup: number, recycles: number[], caption: string): string {
  const total = Math.max(...points.map((p) => p.renders));
  const at = (renders: number) => renders / total;
  const count = (renders: number) => renders.toLocaleString("en-US");
  const axis: XAxis = {
    at: points.map((p) => at(p.renders)),
    names: points.map((p) => `at ${count(p.renders)} renders`),
    ticks: [0, 1, 2, 3, 4].map((q) => ({ at: q / 4, label: count((total * q) / 4) })),
    shadedTo: at(warmup),
    marks: recycles.map(at),
  };
  const width = PANEL_W * 3;
  const legendH = 34;
  const height = legendH + PANEL_H + 24;
  const memory = (label: string, color: string, of: (p: MemoryPoint) => { rssMiB: number; pssMiB: number }): Series[] => [
    { label: `${label} PSS`, color, dashed: false, points: points.map((p) => of(p).pssMiB) },
    { label: `${label} RSS`, color, dashed: true, points: points.map((p) => of(p).rssMiB) },
  ];
  return page(
    width,
    height,
    [
      legendEntry(16, 20, "PSS", COLORS.floor, false),
      legendEntry(96, 20, "RSS (Chromium: summed over its processes)", COLORS.floor, true),
      `<rect x="406" y="13" width="24" height="14" class="shade"/>\n<text x="436" y="24" class="legend">warm-up</text>`,
      `<line x1="526" x2="526" y1="11" y2="29" class="mark"/>\n<text x="534" y="24" class="legend">a new browser (Chromium recycled)</text>`,
      panel(
        0,
        legendH,
        "Chromium, all its processes",
        " MiB",
        axis,
        memory("Chromium", COLORS.pressroom, (p) => p.chromium),
      ),
      panel(
        PANEL_W,
        legendH,
        "render worker (Node)",
        " MiB",
        axis,
        memory("worker", COLORS.jsreport, (p) => p.worker),
      ),
      panel(PANEL_W * 2, legendH, "Chromium processes", "", axis, [
        { label: "Chromium processes", color: COLORS.floor, dashed: false, points: points.map((p) => p.chromiumProcesses) },
        { label: "renderers", color: COLORS.pressroom, dashed: false, points: points.map((p) => p.renderers) },
      ]),
    ],
    caption,
  );
}

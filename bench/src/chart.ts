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

/** One line chart: x is the concurrency levels, evenly spaced; y from 0 to a round maximum. */
function panel(x: number, y: number, title: string, unit: string, levels: number[], series: Series[]): string {
  const innerW = PANEL_W - MARGIN.left - MARGIN.right;
  const innerH = PANEL_H - MARGIN.top - MARGIN.bottom;
  const max = niceMax(Math.max(...series.flatMap((s) => s.points)));
  const px = (i: number) => MARGIN.left + (levels.length === 1 ? innerW / 2 : (i * innerW) / (levels.length - 1));
  const py = (v: number) => MARGIN.top + innerH - (v / max) * innerH;
  const parts = [`<g transform="translate(${x},${y})">`, `<text x="${MARGIN.left}" y="20" class="title">${escape(title)}</text>`];
  for (let t = 0; t <= 4; t++) {
    const v = (max * t) / 4;
    parts.push(`<line x1="${MARGIN.left}" x2="${PANEL_W - MARGIN.right}" y1="${py(v)}" y2="${py(v)}" class="grid"/>`);
    parts.push(`<text x="${MARGIN.left - 6}" y="${py(v) + 4}" class="tick" text-anchor="end">${Number(v.toPrecision(3))}${unit}</text>`);
  }
  levels.forEach((level, i) => parts.push(`<text x="${px(i)}" y="${PANEL_H - MARGIN.bottom + 16}" class="tick" text-anchor="middle">c=${level}</text>`));
  for (const s of series) {
    const points = s.points.map((v, i) => `${px(i).toFixed(1)},${py(v).toFixed(1)}`).join(" ");
    parts.push(`<polyline points="${points}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 4"' : ""}/>`);
    s.points.forEach((v, i) =>
      parts.push(
        `<circle cx="${px(i).toFixed(1)}" cy="${py(v).toFixed(1)}" r="3" fill="${s.color}"><title>${escape(`${s.label} c=${levels[i]}: ${Number(v.toPrecision(3))}${unit}`)}</title></circle>`,
      ),
    );
  }
  parts.push("</g>");
  return parts.join("\n");
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
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    "<style>.title{font-size:13px;font-weight:bold}.tick{font-size:10px;fill:#555}.grid{stroke:#e5e5e5}.legend{font-size:12px}.caption{font-size:10px;fill:#777}</style>",
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
  ];
  const legend: [string, string, boolean][] = [
    ["floor p50 / throughput", COLORS.floor, false],
    ["floor p99", COLORS.floor, true],
    ["Pressroom p50 / throughput", COLORS.pressroom, false],
    ["Pressroom p99", COLORS.pressroom, true],
    ["jsreport p50 / throughput", COLORS.jsreport, false],
  ];
  legend.forEach(([label, color, dashed], i) => {
    const lx = [16, 196, 336, 546, 16][i]!;
    const ly = i < 4 ? 20 : 40;
    parts.push(`<line x1="${lx}" x2="${lx + 24}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"${dashed ? ' stroke-dasharray="5 4"' : ""}/>`);
    parts.push(`<text x="${lx + 30}" y="${ly + 4}" class="legend">${escape(label)}</text>`);
  });
  docs.forEach((doc, d) => {
    const mine = rows.filter((r) => r.doc === doc).sort((a, b) => a.concurrency - b.concurrency);
    const levels = mine.map((r) => r.concurrency);
    const y = legendH + d * PANEL_H;
    parts.push(
      panel(0, y, `${doc}: latency`, " ms", levels, [
        { label: "floor p50", color: COLORS.floor, dashed: false, points: mine.map((r) => r.floor.p50) },
        { label: "floor p99", color: COLORS.floor, dashed: true, points: mine.map((r) => r.floor.p99) },
        { label: "Pressroom p50", color: COLORS.pressroom, dashed: false, points: mine.map((r) => r.pressroom.p50) },
        { label: "Pressroom p99", color: COLORS.pressroom, dashed: true, points: mine.map((r) => r.pressroom.p99) },
        { label: "jsreport p50", color: COLORS.jsreport, dashed: false, points: mine.map((r) => r.jsreport.p50) },
      ]),
      panel(PANEL_W, y, `${doc}: throughput`, "/s", levels, [
        { label: "floor", color: COLORS.floor, dashed: false, points: mine.map((r) => r.floor.throughput) },
        { label: "Pressroom", color: COLORS.pressroom, dashed: false, points: mine.map((r) => r.pressroom.throughput) },
        { label: "jsreport", color: COLORS.jsreport, dashed: false, points: mine.map((r) => r.jsreport.throughput) },
      ]),
    );
  });
  parts.push(`<text x="16" y="${height - 8}" class="caption">${escape(caption)}</text>`, "</svg>", "");
  return parts.join("\n");
}

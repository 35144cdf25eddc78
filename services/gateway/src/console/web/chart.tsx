import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import type { DailyUsage } from "./api";

type Day = DailyUsage["data"][number];

const SUCCEEDED = "#2448c8";
const FAILED = "#b3261e";
const DAY_S = 86_400;

/**
 * Renders per day as bars, succeeded and failed side by side (uPlot, on a canvas the width of
 * its box), with the same numbers in a table below for whoever does not see the chart.
 */
export function DailyChart({ days, caption }: { days: Day[]; caption: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const xs = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1_000);
    const bars = (align: -1 | 1) => uPlot.paths.bars!({ size: [0.4, 28], align, gap: 1 });
    const plot = new uPlot(
      {
        width: element.clientWidth,
        height: 240,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1_000), "Etc/UTC"),
        scales: { x: { time: true, range: (_u, min, max) => [min - DAY_S / 2, max + DAY_S / 2] }, y: { range: (_u, _min, max) => [0, Math.max(4, max)] } },
        axes: [
          { stroke: "#4f566b", grid: { show: false } },
          { stroke: "#4f566b", grid: { stroke: "#d8dee8", width: 1 } },
        ],
        series: [
          { label: "Day", value: (_u, ts) => (ts == null ? "" : new Date(ts * 1_000).toISOString().slice(0, 10)) },
          { label: "Succeeded", fill: SUCCEEDED, stroke: SUCCEEDED, width: 0, paths: bars(-1), points: { show: false } },
          { label: "Failed", fill: FAILED, stroke: FAILED, width: 0, paths: bars(1), points: { show: false } },
        ],
        legend: { live: true },
      },
      [xs, days.map((d) => d.succeeded), days.map((d) => d.failed)],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: 240 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days]);

  return (
    <figure class="chart">
      <figcaption>{caption}</figcaption>
      <div ref={box} class="chart-box" role="img" aria-label={`${caption}: a bar chart; the table below has the same numbers.`} />
      <details>
        <summary>The same numbers as a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Succeeded</th>
              <th scope="col">Failed</th>
              <th scope="col">Of which refunded</th>
            </tr>
          </thead>
          <tbody>
            {days.map((d) => (
              <tr key={d.date}>
                <td>{d.date}</td>
                <td>{d.succeeded}</td>
                <td>{d.failed}</td>
                <td>{d.refunded}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

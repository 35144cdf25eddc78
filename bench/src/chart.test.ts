import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compareChart, memoryChart, niceMax, type CompareRow, type MemoryPoint } from "./chart";

const run = (p50: number, p99: number, throughput: number) => ({ p50, p99, throughput });

describe("the compare chart", () => {
  const rows: CompareRow[] = [
    { doc: "invoice <1 page>", concurrency: 1, floor: run(37, 54, 26.2), pressroom: run(103, 145, 9.7), jsreport: run(129, 160, 7.4) },
    { doc: "invoice <1 page>", concurrency: 4, floor: run(110, 177, 35.3), pressroom: run(289, 486, 12.9), jsreport: run(380, 520, 10.8) },
    { doc: "report", concurrency: 1, floor: run(435, 542, 2.2), pressroom: run(483, 617, 2), jsreport: run(600, 700, 1.6) },
    { doc: "report", concurrency: 4, floor: run(788, 1169, 4.6), pressroom: run(1002, 1479, 3.7), jsreport: run(1400, 1700, 2.8) },
  ];
  const svg = compareChart(rows, "Run on commit abc");

  it("draws latency and throughput for each document, floor, Pressroom and jsreport, at each concurrency", () => {
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.equal(
      (svg.match(/<polyline /g) ?? []).length,
      2 * (5 + 3),
      "per document: p50 and p99 of floor and Pressroom, jsreport's p50, and the three throughputs",
    );
    assert.equal((svg.match(/<circle /g) ?? []).length, 2 * 2 * 8);
    assert.ok(svg.includes("<title>jsreport c=4: 10.8/s</title>"));
    assert.ok(svg.includes("<title>Pressroom p99 c=4: 1480 ms</title>"));
    assert.ok(svg.includes("<title>floor c=1: 26.2/s</title>"));
    assert.ok(svg.includes("invoice &lt;1 page&gt;: latency"), "text is escaped");
    assert.ok(svg.includes("Run on commit abc"));
  });

  it("puts every point inside its panel, under a round axis maximum", () => {
    for (const [, cy] of svg.matchAll(/<circle cx="[\d.]+" cy="([\d.]+)"/g)) assert.ok(Number(cy) >= 34 && Number(cy) <= 180, `cy ${cy}`);
    assert.deepEqual([0.3, 1, 35.3, 486, 1479].map(niceMax), [0.5, 1, 50, 500, 2000]);
  });
});

describe("the memory chart", () => {
  const points: MemoryPoint[] = [0, 250, 500, 750, 1000].map((renders, i) => ({
    renders,
    worker: { rssMiB: 200 + i, pssMiB: 150 + i },
    chromium: { rssMiB: 1800 - i, pssMiB: 600 - i },
    chromiumProcesses: 14 + (i % 2),
    renderers: 9 + (i % 2),
  }));
  const svg = memoryChart(points, 250, [750], "Run on commit abc");

  it("draws PSS and RSS of Chromium and of the worker, and Chromium's process and renderer counts, at each sample", () => {
    assert.equal((svg.match(/<polyline /g) ?? []).length, 6);
    assert.equal((svg.match(/<circle /g) ?? []).length, 6 * points.length);
    assert.ok(svg.includes("<title>Chromium PSS at 750 renders: 597 MiB</title>"));
    assert.ok(svg.includes("<title>worker RSS at 1,000 renders: 204 MiB</title>"));
    assert.ok(svg.includes("<title>Chromium processes at 250 renders: 15</title>"));
    assert.ok(svg.includes("<title>renderers at 500 renders: 9</title>"));
    assert.ok(svg.includes("Run on commit abc"));
  });

  it("places samples by their renders, and shades the warm-up and marks each new browser in every panel", () => {
    const xs = [...svg.matchAll(/<circle cx="([\d.]+)"/g)].slice(0, points.length).map(([, cx]) => Number(cx));
    assert.deepEqual(
      xs.map((x) => Math.round(((x - xs[0]!) / (xs.at(-1)! - xs[0]!)) * 1000)),
      [0, 250, 500, 750, 1000],
    );
    const marks = [...svg.matchAll(/<line x1="([\d.]+)" x2="[\d.]+" y1="[\d.]+" y2="[\d.]+" class="mark"\/>/g)].map(([, x]) => Number(x));
    assert.deepEqual(
      marks.slice(1),
      [xs[3], xs[3], xs[3]],
      "the legend's, then one in each panel (drawn in the panel's own coordinates) at the sample of render 750",
    );
    const shades = [...svg.matchAll(/<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)" height="[\d.]+" class="shade"\/>/g)].map(
      ([, x, w]) => Number(x) + Number(w),
    );
    assert.deepEqual(shades.slice(1), [xs[1], xs[1], xs[1]], "the legend's, then one in each panel up to render 250");
  });
});

import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "@pressroom/stack";

export interface Sample {
  /** The series name as exposed, e.g. pressroom_render_duration_bucket. */
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format: one sample per line that is not a comment. */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[label[1]!] = label[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Scrapes one service's /metrics. */
export async function scrape(healthPort: number): Promise<Sample[]> {
  const response = await fetch(`http://127.0.0.1:${healthPort}/metrics`);
  if (!response.ok) throw new Error(`/metrics on :${healthPort} answered ${response.status}`);
  return parsePrometheus(await response.text());
}

/** The series a metric of docs/metrics.md is exposed as: itself, or its histogram's _count. */
export function seriesOf(metric: string, samples: Sample[]): Sample[] {
  return samples.filter((s) => s.name === metric || s.name === `${metric}_count`);
}

/** The sum of a metric's values (a histogram's counts) over the samples whose labels include `labels`. */
export function total(metric: string, samples: Sample[], labels: Record<string, string> = {}): number {
  return seriesOf(metric, samples)
    .filter((s) => Object.entries(labels).every(([name, value]) => s.labels[name] === value))
    .reduce((sum, s) => sum + s.value, 0);
}

export interface DocumentedMetric {
  name: string;
  services: string[];
}

/** The one table of docs/metrics.md: every metric Pressroom exports, with the services that export it. */
export function documentedMetrics(): DocumentedMetric[] {
  const doc = readFileSync(path.join(REPO_ROOT, "docs", "metrics.md"), "utf8");
  const rows = [...doc.matchAll(/^\| `([a-z0-9_]+)` \|[^\n]*\| ([a-z, ]+) \|[^|\n]*\|$/gm)];
  if (rows.length === 0) throw new Error("docs/metrics.md has no metric table");
  return rows.map((row) => ({ name: row[1]!, services: row[2]!.split(",").map((s) => s.trim()) }));
}

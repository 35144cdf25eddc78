import type { IncomingMessage, ServerResponse } from "node:http";
import { metrics, type Attributes, type Histogram, type Meter } from "@opentelemetry/api";
import type { PrometheusExporter } from "@opentelemetry/exporter-prometheus";

/** Bucket bounds for durations in seconds: from a cached lookup to a sync render's whole wait. */
export const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Bucket bounds for sizes in bytes: 1 KiB to 64 MiB, by fours. */
export const BYTES_BUCKETS = [1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216, 67_108_864];
/** Bucket bounds for small counts (pages of a document, attempts of a delivery). */
export const COUNT_BUCKETS = [1, 2, 3, 5, 10, 20, 50, 100];

/**
 * Pressroom's meter. Instruments are made from it when a module loads, which
 * is after `--require @pressroom/platform/telemetry` set the meter provider;
 * without that preload (unit tests) they record nothing.
 */
export function meter(): Meter {
  return metrics.getMeter("pressroom");
}

/** A histogram of durations in seconds with SECONDS_BUCKETS. */
export function secondsHistogram(name: string, description: string): Histogram {
  return meter().createHistogram(name, { unit: "s", description, advice: { explicitBucketBoundaries: SECONDS_BUCKETS } });
}

/** A histogram of sizes in bytes with BYTES_BUCKETS. */
export function bytesHistogram(name: string, description: string): Histogram {
  return meter().createHistogram(name, { unit: "By", description, advice: { explicitBucketBoundaries: BYTES_BUCKETS } });
}

/** Records the seconds since `startedAt` (a `performance.now()` reading). */
export function recordSince(histogram: Histogram, startedAt: number, attributes: Attributes): void {
  histogram.record((performance.now() - startedAt) / 1000, attributes);
}

/** "2xx" … "5xx": the status class label of HTTP metrics. */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

const PROMETHEUS = Symbol.for("pressroom.metrics.prometheus");

type GlobalWithExporter = typeof globalThis & { [PROMETHEUS]?: PrometheusExporter };

/** Called by startTelemetry: the exporter that /metrics serves. */
export function setPrometheusExporter(exporter: PrometheusExporter): void {
  (globalThis as GlobalWithExporter)[PROMETHEUS] = exporter;
}

/**
 * Answers a scrape in the Prometheus text format. A process whose telemetry
 * was not started (no preload) has no metrics and answers an empty page.
 */
export function serveMetrics(request: IncomingMessage, response: ServerResponse): void {
  const exporter = (globalThis as GlobalWithExporter)[PROMETHEUS];
  if (exporter) exporter.getMetricsRequestHandler(request, response);
  else response.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end();
}

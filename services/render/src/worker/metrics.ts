import { COUNT_BUCKETS, bytesHistogram, meter, recordSince, secondsHistogram } from "@pressroom/platform";
import type { ImageFormat } from "@pressroom/domain";
import type { RenderEngine, RenderOutput } from "../engine";

/** The `output` label: pdf, or the image's own format. */
export type OutputLabel = "pdf" | ImageFormat;

/** The `output` label of what was made. */
export function outputLabelOf(contentType: RenderOutput["contentType"]): OutputLabel {
  return contentType === "application/pdf" ? "pdf" : (contentType.slice("image/".length) as ImageFormat);
}

const renderDuration = secondsHistogram(
  "pressroom.render.duration",
  "Renders on a page, by output (pdf, png, jpeg, webp), outcome (succeeded, failed) and error.type (the limit hit).",
);
const templateDuration = secondsHistogram("pressroom.render.template.duration", "Handlebars expansion of a job's template with its data.");
const outputSize = bytesHistogram("pressroom.render.output.size", "Bytes of each rendered output, by output.");
const outputPages = meter().createHistogram("pressroom.render.output.pages", {
  unit: "{page}",
  description: "Pages of each rendered PDF.",
  advice: { explicitBucketBoundaries: COUNT_BUCKETS },
});
const succeeded = meter().createCounter("pressroom.jobs.succeeded", { unit: "{job}", description: "Jobs that succeeded, by output." });
const failed = meter().createCounter("pressroom.jobs.failed", {
  unit: "{job}",
  description: "Jobs that failed, by error.code (RENDER_FAILED: the document's fault; INTERNAL_ERROR: ours).",
});

export const renderMetrics = {
  rendered(output: OutputLabel, startedAt: number, result: { bytes: number; pages: number } | { reason: string }): void {
    if ("reason" in result) {
      recordSince(renderDuration, startedAt, { output, outcome: "failed", "error.type": result.reason });
      return;
    }
    recordSince(renderDuration, startedAt, { output, outcome: "succeeded" });
    outputSize.record(result.bytes, { output });
    if (output === "pdf") outputPages.record(result.pages);
  },
  templateExpanded(startedAt: number): void {
    recordSince(templateDuration, startedAt, {});
  },
  jobSucceeded(output: OutputLabel): void {
    succeeded.add(1, { output });
  },
  jobFailed(code: string): void {
    failed.add(1, { "error.code": code });
  },
};

/** Read when scraped: the pool's slots, and Chromium's relaunches and crashes, from the engine. */
export function observeRenderPool(deps: { engine: RenderEngine; slots: number }): void {
  const m = meter();
  m.createObservableGauge("pressroom.render.slots", { unit: "{slot}", description: "Render slots by state (busy, idle); their sum is the total." }).addCallback(
    (result) => {
      const busy = deps.engine.stats().busySlots;
      result.observe(busy, { state: "busy" });
      result.observe(Math.max(0, deps.slots - busy), { state: "idle" });
    },
  );
  m.createObservableCounter("pressroom.render.chromium.relaunches", {
    unit: "{launch}",
    description: "Browser launches after the first: crashes, hangs and recycling.",
  }).addCallback((result) => result.observe(deps.engine.stats().relaunches));
  m.createObservableCounter("pressroom.render.chromium.crashes", { unit: "{crash}", description: "Browsers that disconnected unexpectedly." }).addCallback(
    (result) => result.observe(deps.engine.stats().crashes),
  );
}

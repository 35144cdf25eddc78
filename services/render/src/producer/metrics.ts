import { COUNT_BUCKETS, bytesHistogram, meter, recordSince, secondsHistogram } from "@pressroom/platform";
import type { RenderEngine } from "../engine";
import type { OutputFormat } from "./producer";

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

export const renderMetrics = {
  rendered(output: OutputFormat, startedAt: number, result: { bytes: number; pages: number } | { reason: string }): void {
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
};

/** Read when scraped: the pool's slots, the renders written over, and Chromium's sandbox, relaunches and crashes, from the engine. */
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
  m.createObservableGauge("pressroom.render.chromium.sandboxed", {
    unit: "{browser}",
    description: "1 when this pod's Chromium runs with its own sandbox, 0 when not (its command line as it reports it); absent while no browser is up.",
  }).addCallback((result) => {
    const { sandboxed } = deps.engine.stats();
    if (sandboxed !== undefined) result.observe(sandboxed ? 1 : 0);
  });
  m.createObservableCounter("pressroom.render.written_over", {
    unit: "{render}",
    description: "Renders written over their key's last script-free document, with no new document (the engine's README).",
  }).addCallback((result) => result.observe(deps.engine.stats().writtenOver));
  m.createObservableCounter("pressroom.render.chromium.crashes", { unit: "{crash}", description: "Browsers that disconnected unexpectedly." }).addCallback(
    (result) => result.observe(deps.engine.stats().crashes),
  );
}

import { meter } from "@pressroom/platform";
import type { OutputFormat } from "../producer/producer";

const succeeded = meter().createCounter("pressroom.jobs.succeeded", { unit: "{job}", description: "Jobs that succeeded, by output." });
const failed = meter().createCounter("pressroom.jobs.failed", {
  unit: "{job}",
  description: "Jobs that failed, by error.code (RENDER_FAILED: the document's fault; INTERNAL_ERROR: ours).",
});

export const jobMetrics = {
  succeeded(output: OutputFormat): void {
    succeeded.add(1, { output });
  },
  failed(code: string): void {
    failed.add(1, { "error.code": code });
  },
};

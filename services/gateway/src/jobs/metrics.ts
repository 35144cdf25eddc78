import { meter } from "@pressroom/platform";
import type { JobKind } from "./request";

const accepted = meter().createCounter("pressroom.jobs.accepted", {
  unit: "{job}",
  description: "Jobs accepted, by kind (render, image, screenshot) and mode (sync, async).",
});
const syncFallbacks = meter().createCounter("pressroom.jobs.sync_fallbacks", {
  unit: "{job}",
  description: "Sync requests whose job had not ended within SYNC_WAIT_MS and were answered 202.",
});

export const jobMetrics = {
  accepted(kind: JobKind, sync: boolean): void {
    accepted.add(1, { kind, mode: sync ? "sync" : "async" });
  },
  syncFallback(kind: JobKind): void {
    syncFallbacks.add(1, { kind });
  },
};

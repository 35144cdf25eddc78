import { secondsHistogram } from "@pressroom/platform";

const stepDuration = secondsHistogram(
  "pressroom.render.postprocess.duration",
  "Post-processing of a printed PDF, by step (watermark, test_stamp, pdfa, describe, encrypt, merge), when a job asks for it; page_png, a pdf template's preview.",
);

export const postProcessMetrics = {
  /** The steps' durations, as the post-processing process measured them. */
  steps(times: [string, number][]): void {
    for (const [step, seconds] of times) stepDuration.record(seconds, { step });
  },
};

import { recordSince, secondsHistogram } from "@pressroom/platform";

const stepDuration = secondsHistogram(
  "pressroom.render.postprocess.duration",
  "Post-processing of a printed PDF, by step (watermark, test_stamp, pdfa, describe, encrypt, merge), when a job asks for it.",
);

export const postProcessMetrics = {
  step(step: string, startedAt: number): void {
    recordSince(stepDuration, startedAt, { step });
  },
};

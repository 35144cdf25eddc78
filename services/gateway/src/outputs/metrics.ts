import { meter } from "@pressroom/platform";

const served = meter().createCounter("pressroom.gateway.outputs.served", {
  unit: "{output}",
  description: "Outputs answered (downloads and document answers), from those announced to this replica with their job's end or from storage.",
});

export const outputMetrics = {
  served(source: "announced" | "storage"): void {
    served.add(1, { source });
  },
};

import { meter } from "@pressroom/platform";

const stored = meter().createCounter("pressroom.storage.outputs.stored", { unit: "{output}", description: "Outputs stored, by content type." });
const bytes = meter().createCounter("pressroom.storage.bytes.stored", { unit: "By", description: "Bytes of outputs stored, by content type." });
const swept = meter().createCounter("pressroom.storage.outputs.swept", { unit: "{output}", description: "Expired outputs deleted by the sweep." });
const lookups = meter().createCounter("pressroom.storage.cache.lookups", {
  unit: "{lookup}",
  description: "Downloads served from this replica's recent outputs (result hit) or from the row and the object store (miss).",
});

export const storageMetrics = {
  stored(contentType: string, size: number): void {
    const attributes = { "pressroom.output.content_type": contentType === "application/pdf" || contentType === "image/png" ? contentType : "other" };
    stored.add(1, attributes);
    bytes.add(size, attributes);
  },
  swept(count: number): void {
    swept.add(count);
  },
  lookup(hit: boolean): void {
    lookups.add(1, { result: hit ? "hit" : "miss" });
  },
};

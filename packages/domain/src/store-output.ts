import { storageV1 } from "@pressroom/contracts";
import type { JetStreamClient } from "nats";
import { call, withSpan, writeObjectChunks } from "@pressroom/platform";

export interface OutputTarget {
  storage: storageV1.StorageServiceClient;
  js: JetStreamClient;
  /** Storage's output bucket. */
  bucket: string;
}

/**
 * Stores one output, as a render worker does: its bytes go straight into
 * the output bucket as chunks under no name, then storage registers them
 * (the output's row and name) and returns its signed URL. The bytes cross
 * one process boundary, not two.
 */
export function storeOutput(
  target: OutputTarget,
  metadata: storageV1.OutputMetadata,
  data: Uint8Array,
  deadlineMs = 30_000,
): Promise<storageV1.RegisterOutputResponse> {
  return withSpan("storage.store_output", { attributes: { "pressroom.output.size_bytes": data.byteLength } }, async () => {
    const written = await writeObjectChunks(target.js, target.bucket, data);
    const chunks = { nuid: written.nuid, sizeBytes: String(written.size), chunks: written.chunks, digest: written.digest };
    return call(target.storage, target.storage.registerOutput, { metadata, chunks }, deadlineMs);
  });
}

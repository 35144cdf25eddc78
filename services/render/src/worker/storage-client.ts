import { storageV1 } from "@pressroom/contracts";
import { fromGrpcError, withSpan } from "@pressroom/platform";

const CHUNK = 256 * 1024;

/** Streams one output to the storage service and returns its signed URL. */
export function storeOutput(
  client: storageV1.StorageServiceClient,
  metadata: storageV1.OutputMetadata,
  data: Uint8Array,
  deadlineMs = 30_000,
): Promise<storageV1.PutOutputResponse> {
  return withSpan(
    "storage.put_output",
    { attributes: { "pressroom.output.size_bytes": data.byteLength } },
    () =>
      new Promise<storageV1.PutOutputResponse>((resolve, reject) => {
        const call = client.putOutput({ deadline: Date.now() + deadlineMs }, (err, response) => (err ? reject(fromGrpcError(err)) : resolve(response)));
        call.write({ metadata });
        const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
        for (let offset = 0; offset < bytes.length; offset += CHUNK) call.write({ chunk: bytes.subarray(offset, offset + CHUNK) });
        call.end();
      }),
  );
}

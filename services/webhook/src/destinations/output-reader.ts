import type { storageV1 } from "@pressroom/contracts";
import { fromGrpcError } from "@pressroom/platform";

/** Reads a job's output by its signed URL: its bytes, or "gone" when storage no longer has it (expired or deleted). */
export interface OutputReader {
  read(signedUrl: string): Promise<Uint8Array | "gone">;
}

/** The OutputReader over storage's GetOutput (the same signature check as a download's). Throws when storage cannot answer. */
export function storageOutputs(storage: storageV1.StorageServiceClient): OutputReader {
  return {
    async read(signedUrl) {
      const url = new URL(signedUrl, "http://pressroom.invalid");
      const outputId = /^\/v1\/outputs\/([^/]+)$/.exec(url.pathname)?.[1] ?? "";
      const stream = storage.getOutput(
        { outputId, exp: url.searchParams.get("exp") ?? "", sig: url.searchParams.get("sig") ?? "", infoOnly: false },
        { deadline: Date.now() + 120_000 },
      );
      const chunks: Buffer[] = [];
      try {
        for await (const message of stream as AsyncIterable<storageV1.GetOutputResponse>) {
          if (message.chunk && message.chunk.length > 0) chunks.push(Buffer.from(message.chunk));
        }
      } catch (err) {
        const appError = fromGrpcError(err);
        if (appError.code === "URL_EXPIRED" || appError.code === "NOT_FOUND") return "gone";
        throw appError;
      }
      return Buffer.concat(chunks);
    },
  };
}

import type { ServerReadableStream, ServerWritableStream, ServiceError, sendUnaryData } from "@grpc/grpc-js";
import { storageV1 } from "@pressroom/contracts";
import { AppError, newId, toGrpcError, withSpan, type Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { ObjectStore } from "nats";
import type { StorageDb } from "../db";
import { checkSignature, signedUrl } from "./signing";

export interface StorageDeps {
  db: Kysely<StorageDb>;
  store: ObjectStore;
  logger: Logger;
  publicBaseUrl: string;
  signingSecret: string;
  ttlSeconds: number;
}

const CHUNK_SIZE = 128 * 1024;

const expired = () => new AppError("URL_EXPIRED", "this download link has expired or the output was deleted", "Render the document again to get a new link.");
const invalid = () => new AppError("URL_INVALID", "this download link is not valid", "Use the exact URL returned by the API; it must not be modified.");

async function putOutput(deps: StorageDeps, call: ServerReadableStream<storageV1.PutOutputRequest, storageV1.PutOutputResponse>): Promise<storageV1.PutOutputResponse> {
  const messages = call[Symbol.asyncIterator]() as AsyncIterator<storageV1.PutOutputRequest>;
  const first = await messages.next();
  const metadata = first.done ? undefined : first.value.metadata;
  if (!metadata || !metadata.contentType) throw new AppError("PAYLOAD_INVALID", "the first message must carry the output metadata", "Send metadata, then chunks.");
  const outputId = metadata.outputId || newId("out");
  let size = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = await messages.next();
        if (next.done) {
          controller.close();
          return;
        }
        if (next.value.chunk && next.value.chunk.length > 0) {
          size += next.value.chunk.length;
          controller.enqueue(next.value.chunk);
          return;
        }
      }
    },
  });
  await withSpan("storage.write", { attributes: { "pressroom.output.content_type": metadata.contentType } }, async (span) => {
    await deps.store.put({ name: outputId }, body);
    span.setAttribute("pressroom.output.size_bytes", size);
  });
  const exp = Math.floor(Date.now() / 1000) + deps.ttlSeconds;
  const expiresAt = new Date(exp * 1000);
  await deps.db
    .insertInto("outputs")
    .values({
      output_id: outputId,
      job_id: metadata.jobId,
      key_id: metadata.keyId,
      content_type: metadata.contentType,
      filename: metadata.filename || outputId,
      size_bytes: size,
      expires_at: expiresAt,
      deleted_at: null,
    })
    .execute();
  return {
    outputId,
    url: signedUrl(deps.publicBaseUrl, deps.signingSecret, outputId, exp),
    expiresAt: expiresAt.toISOString(),
    sizeBytes: String(size),
    contentType: metadata.contentType,
  };
}

async function getOutput(deps: StorageDeps, call: ServerWritableStream<storageV1.GetOutputRequest, storageV1.GetOutputResponse>): Promise<void> {
  const { outputId, exp, sig } = call.request;
  const check = checkSignature(deps.signingSecret, outputId, exp, sig, Math.floor(Date.now() / 1000));
  if (check === "invalid") throw invalid();
  if (check === "expired") throw expired();
  const row = await deps.db.selectFrom("outputs").selectAll().where("output_id", "=", outputId).executeTakeFirst();
  if (!row || row.deleted_at || row.expires_at.getTime() < Date.now()) throw expired();
  const object = await deps.store.get(outputId);
  if (!object) throw expired();
  call.write({ info: { contentType: row.content_type, filename: row.filename, sizeBytes: String(row.size_bytes), expiresAt: row.expires_at.toISOString() } });
  const reader = object.data.getReader();
  for (;;) {
    if (call.cancelled) {
      // The downloader went away: stop reading the object.
      await reader.cancel().catch(() => undefined);
      return;
    }
    const { done, value } = await reader.read();
    if (done) break;
    for (let offset = 0; offset < value.length; offset += CHUNK_SIZE) {
      const chunk = Buffer.from(value.buffer, value.byteOffset + offset, Math.min(CHUNK_SIZE, value.length - offset));
      if (!call.write({ chunk })) {
        await new Promise<void>((resolve) => {
          const done = () => {
            call.off("drain", done);
            call.off("cancelled", done);
            resolve();
          };
          call.once("drain", done);
          call.once("cancelled", done);
        });
      }
    }
  }
  await object.error;
}

export function storageService(deps: StorageDeps): storageV1.StorageServiceServer {
  return {
    putOutput: (call, callback: sendUnaryData<storageV1.PutOutputResponse>) => {
      putOutput(deps, call).then(
        (response) => callback(null, response),
        (err: unknown) => {
          if (!(err instanceof AppError)) deps.logger.error({ err }, "storing an output failed");
          callback(toGrpcError(err) as ServiceError);
        },
      );
    },
    getOutput: (call) => {
      getOutput(deps, call).then(
        () => call.end(),
        (err: unknown) => {
          if (!(err instanceof AppError)) deps.logger.error({ err }, "reading an output failed");
          // A server stream reports its status through "error" (destroy() would end it without one, and the caller would wait for its deadline).
          call.emit("error", toGrpcError(err) as ServiceError);
        },
      );
    },
  };
}

/**
 * Deletes outputs past their expiry: claims a batch by marking the rows
 * deleted in one statement (SKIP LOCKED, so replicas sweeping at the same
 * time take different rows, and downloads answer 410 from that moment), then
 * deletes their objects from the store. An object whose delete fails is
 * still removed by the bucket's own max age.
 */
export async function sweepExpired(deps: Pick<StorageDeps, "db" | "store" | "logger">, batch = 500): Promise<number> {
  const now = new Date();
  const claimed = await deps.db
    .updateTable("outputs")
    .set({ deleted_at: now })
    .where("output_id", "in", (eb) =>
      eb.selectFrom("outputs").select("output_id").where("deleted_at", "is", null).where("expires_at", "<", now).limit(batch).forUpdate().skipLocked(),
    )
    .returning("output_id")
    .execute();
  for (const { output_id } of claimed) {
    await deps.store.delete(output_id).catch((err: unknown) => deps.logger.warn({ err, output_id }, "deleting an expired output failed"));
  }
  return claimed.length;
}

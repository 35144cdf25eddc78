import type { ServerReadableStream, ServerWritableStream, ServiceError, sendUnaryData } from "@grpc/grpc-js";
import { storageV1 } from "@pressroom/contracts";
import { AppError, newId, toGrpcError, withSpan, type Logger, type RecentOutputs } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { ObjectStore } from "nats";
import type { StorageDb } from "../db";
import type { ObjectWriter } from "./object-writer";
import { storageMetrics } from "./metrics";
import { deleteOutput, findOutput, insertOutput } from "./outputs.repository";
import { checkSignature, signedUrl } from "./signing";

export interface StorageDeps {
  db: Kysely<StorageDb>;
  /** Reads and deletes outputs. */
  store: ObjectStore;
  /** Writes a new output into the same bucket. */
  writeObject: (name: string) => ObjectWriter;
  logger: Logger;
  publicBaseUrl: string;
  signingSecret: string;
  ttlSeconds: number;
  recentOutputs: RecentOutputs;
}

const CHUNK_SIZE = 128 * 1024;

const expired = () => new AppError("URL_EXPIRED", "this download link has expired or the output was deleted", "Render the document again to get a new link.");
const invalid = () => new AppError("URL_INVALID", "this download link is not valid", "Use the exact URL returned by the API; it must not be modified.");

type PutCall = ServerReadableStream<storageV1.PutOutputRequest, storageV1.PutOutputResponse>;
type GetCall = ServerWritableStream<storageV1.GetOutputRequest, storageV1.GetOutputResponse>;

async function putOutput(deps: StorageDeps, call: PutCall): Promise<storageV1.PutOutputResponse> {
  const messages = call[Symbol.asyncIterator]() as AsyncIterator<storageV1.PutOutputRequest>;
  const first = await messages.next();
  const metadata = first.done ? undefined : first.value.metadata;
  if (!metadata || !metadata.contentType) {
    throw new AppError("PAYLOAD_INVALID", "the first message must carry the output metadata", "Send metadata, then chunks.");
  }
  const outputId = metadata.outputId || newId("out");
  const filename = metadata.filename || outputId;
  // The chunks, kept for the recent outputs while their total is small enough; undefined once it is not.
  let kept: Buffer[] | undefined = deps.recentOutputs.accepts(0) ? [] : undefined;
  const writer = deps.writeObject(outputId);
  const exp = Math.floor(Date.now() / 1000) + deps.ttlSeconds;
  const expiresAt = new Date(exp * 1000);
  let rowInserted = false;
  try {
    await withSpan("storage.write", { attributes: { "pressroom.output.content_type": metadata.contentType } }, async (span) => {
      for (let next = await messages.next(); !next.done; next = await messages.next()) {
        const chunk = next.value.chunk;
        if (!chunk || chunk.length === 0) continue;
        await writer.write(chunk);
        if (kept && deps.recentOutputs.accepts(writer.size)) kept.push(chunk);
        else kept = undefined;
      }
      await writer.flush();
      // The row claims the id before the object is named: an output that exists is never overwritten.
      await insertOutput(deps.db, {
        output_id: outputId,
        job_id: metadata.jobId,
        key_id: metadata.keyId,
        content_type: metadata.contentType,
        filename,
        size_bytes: writer.size,
        expires_at: expiresAt,
        deleted_at: null,
      });
      rowInserted = true;
      await writer.commit();
      span.setAttribute("pressroom.output.size_bytes", writer.size);
    });
  } catch (err) {
    await writer.abort().catch((abortErr: unknown) => deps.logger.warn({ err: abortErr, outputId }, "removing a failed output's chunks failed"));
    if (rowInserted) await deleteOutput(deps.db, outputId);
    throw err;
  }
  const size = writer.size;
  storageMetrics.stored(metadata.contentType, size);
  // Only now that the object and its row are stored: a failed put is never served from memory.
  if (kept) deps.recentOutputs.add(outputId, { info: { contentType: metadata.contentType, filename, expiresAt }, bytes: Buffer.concat(kept, size) });
  return {
    outputId,
    url: signedUrl(deps.publicBaseUrl, deps.signingSecret, outputId, exp),
    expiresAt: expiresAt.toISOString(),
    sizeBytes: String(size),
    contentType: metadata.contentType,
  };
}

async function getOutput(deps: StorageDeps, call: GetCall): Promise<void> {
  const { outputId, exp, sig } = call.request;
  const check = checkSignature(deps.signingSecret, outputId, exp, sig, Math.floor(Date.now() / 1000));
  if (check === "invalid") throw invalid();
  if (check === "expired") throw expired();
  // Outputs are deleted only by the sweep, after their expires_at (the instant
  // kept with a recent output), so an unexpired recent output is still the stored one.
  const recent = deps.recentOutputs.get(outputId);
  storageMetrics.lookup(recent !== undefined);
  if (recent) {
    const { contentType, filename, expiresAt } = recent.info;
    call.write({ info: { contentType, filename, sizeBytes: String(recent.bytes.length), expiresAt: expiresAt.toISOString() } });
    await writeChunks(call, recent.bytes);
    return;
  }
  const row = await findOutput(deps.db, outputId);
  if (!row || row.deleted_at || row.expires_at.getTime() < Date.now()) throw expired();
  const object = await deps.store.get(outputId);
  if (!object) throw expired();
  call.write({ info: { contentType: row.content_type, filename: row.filename, sizeBytes: String(row.size_bytes), expiresAt: row.expires_at.toISOString() } });
  const reader = object.data.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!(await writeChunks(call, value))) {
      // The downloader went away: stop reading the object.
      await reader.cancel().catch(() => undefined);
      return;
    }
  }
  await object.error;
}

/**
 * Writes bytes to the download in CHUNK_SIZE messages, waiting for the stream
 * to drain when it asks to. Returns false when the downloader went away.
 */
async function writeChunks(call: GetCall, bytes: Uint8Array): Promise<boolean> {
  for (let offset = 0; offset < bytes.length && !call.cancelled; offset += CHUNK_SIZE) {
    const chunk = Buffer.from(bytes.buffer, bytes.byteOffset + offset, Math.min(CHUNK_SIZE, bytes.length - offset));
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
  return !call.cancelled;
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

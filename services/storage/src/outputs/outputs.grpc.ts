import type { ServerUnaryCall, ServerWritableStream, ServiceError, sendUnaryData } from "@grpc/grpc-js";
import { storageV1 } from "@pressroom/contracts";
import { AppError, commitObject, findObject, newId, purgeObjectChunks, readObject, toGrpcError, withSpan } from "@pressroom/platform";
import type { StorageDeps } from "../deps";
import { storageMetrics } from "./metrics";
import { deleteOutput, findOutput, insertOutput } from "./outputs.repository";
import { checkSignature, signedUrl } from "./signing";

const CHUNK_SIZE = 128 * 1024;
/** A nuid: what the object store names an object's chunks by (no dots or wildcards that would reach other subjects). */
const NUID = /^[A-Za-z0-9]{22}$/;
const DIGEST = /^SHA-256=[A-Za-z0-9_-]{43}=$/;

const expired = () => new AppError("URL_EXPIRED", "this download link has expired or the output was deleted", "Render the document again to get a new link.");
const invalid = () => new AppError("URL_INVALID", "this download link is not valid", "Use the exact URL returned by the API; it must not be modified.");
const badRequest = (message: string) => new AppError("PAYLOAD_INVALID", message, "Write the chunks first, then register them with the output's metadata.");

type RegisterCall = ServerUnaryCall<storageV1.RegisterOutputRequest, storageV1.RegisterOutputResponse>;
type GetCall = ServerWritableStream<storageV1.GetOutputRequest, storageV1.GetOutputResponse>;

/**
 * Names chunks render wrote as a new output: the row claims the id first, so
 * an output that exists is never overwritten, then the name is published.
 * Anything that fails removes the chunks (and the row, once inserted).
 */
async function registerOutput(deps: StorageDeps, { metadata, chunks }: storageV1.RegisterOutputRequest): Promise<storageV1.RegisterOutputResponse> {
  if (!chunks || !NUID.test(chunks.nuid)) throw badRequest("the chunks' nuid is missing or malformed");
  const { js, jsm, name: bucket } = deps.bucket;
  const size = Number(chunks.sizeBytes);
  const outputId = metadata?.outputId || newId("out");
  const exp = Math.floor(Date.now() / 1000) + deps.ttlSeconds;
  const expiresAt = new Date(exp * 1000);
  let rowInserted = false;
  try {
    if (!metadata?.contentType) throw badRequest("the output's metadata and content type are required");
    if (!Number.isSafeInteger(size) || size <= 0 || chunks.chunks <= 0 || !DIGEST.test(chunks.digest))
      throw badRequest("the chunks' size, count or digest is malformed");
    const contentType = metadata.contentType;
    await withSpan("storage.register", { attributes: { "pressroom.output.content_type": contentType, "pressroom.output.size_bytes": size } }, async () => {
      await insertOutput(deps.db, {
        output_id: outputId,
        job_id: metadata.jobId,
        key_id: metadata.keyId,
        content_type: contentType,
        filename: metadata.filename || outputId,
        attachment: metadata.attachment,
        size_bytes: size,
        expires_at: expiresAt,
        deleted_at: null,
      });
      rowInserted = true;
      await commitObject(js, bucket, outputId, { nuid: chunks.nuid, size, chunks: chunks.chunks, digest: chunks.digest });
    });
    storageMetrics.stored(contentType, size);
    return {
      outputId,
      url: signedUrl(deps.publicBaseUrl, deps.signingSecret, outputId, exp),
      expiresAt: expiresAt.toISOString(),
      sizeBytes: String(size),
      contentType,
    };
  } catch (err) {
    await purgeObjectChunks(jsm, bucket, chunks.nuid).catch((purgeErr: unknown) =>
      deps.logger.warn({ err: purgeErr, outputId }, "removing a failed output's chunks failed"),
    );
    if (rowInserted) await deleteOutput(deps.db, outputId);
    throw err;
  }
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
    const { contentType, filename, attachment, expiresAt } = recent.info;
    call.write({ info: { contentType, filename, attachment, sizeBytes: String(recent.bytes.length), expiresAt: expiresAt.toISOString() } });
    await writeChunks(call, recent.bytes);
    return;
  }
  const row = await findOutput(deps.db, outputId);
  if (!row || row.deleted_at || row.expires_at.getTime() < Date.now()) throw expired();
  const object = await findObject(deps.bucket.jsm, deps.bucket.name, outputId);
  if (!object) throw expired();
  const info = { contentType: row.content_type, filename: row.filename, attachment: row.attachment, expiresAt: row.expires_at };
  call.write({ info: { ...info, sizeBytes: String(row.size_bytes), expiresAt: row.expires_at.toISOString() } });
  // The chunks, kept for the recent outputs when the whole output is small enough.
  const kept: Uint8Array[] | undefined = deps.recentOutputs.accepts(Number(row.size_bytes)) ? [] : undefined;
  // Its last step checks the digest: an object that does not match fails the download.
  for await (const chunk of readObject(deps.bucket.jsm, deps.bucket.name, object)) {
    kept?.push(chunk);
    // The downloader went away: stop reading the object.
    if (!(await writeChunks(call, chunk))) return;
  }
  // Only once the object was read whole and its digest checked: its next downloads come from memory.
  if (kept) deps.recentOutputs.add(outputId, { info, bytes: Buffer.concat(kept) });
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
    registerOutput: (call: RegisterCall, callback: sendUnaryData<storageV1.RegisterOutputResponse>) => {
      registerOutput(deps, call.request).then(
        (response) => callback(null, response),
        (err: unknown) => {
          if (!(err instanceof AppError)) deps.logger.error({ err }, "registering an output failed");
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

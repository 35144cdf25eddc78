import type { ServerUnaryCall, ServerWritableStream, ServiceError, sendUnaryData } from "@grpc/grpc-js";
import { storageV1 } from "@pressroom/contracts";
import { MIN_OUTPUT_TTL_SECONDS } from "@pressroom/domain";
import {
  AppError,
  commitObject,
  findObject,
  MAX_OUTPUT_TTL_SECONDS,
  newId,
  purgeObject,
  purgeObjectChunks,
  readObject,
  toGrpcError,
  withSpan,
} from "@pressroom/platform";
import type { StorageDeps } from "../deps";
import { storageMetrics } from "./metrics";
import { deleteOutput, findLiveOutputs, findOutput, insertOutput, markDeleted } from "./outputs.repository";
import { checkSignature, signedUrl } from "./signing";

const CHUNK_SIZE = 128 * 1024;
/** A nuid: what the object store names an object's chunks by (no dots or wildcards that would reach other subjects). */
const NUID = /^[A-Za-z0-9]{22}$/;
const DIGEST = /^SHA-256=[A-Za-z0-9_-]{43}=$/;

const expired = () => new AppError("URL_EXPIRED", "this download link has expired or the output was deleted", "Render the document again to get a new link.");
const invalid = () => new AppError("URL_INVALID", "this download link is not valid", "Use the exact URL returned by the API; it must not be modified.");
const badRequest = (message: string) => new AppError("PAYLOAD_INVALID", message, "Write the chunks first, then register them with the output's metadata.");
const notFound = (outputId: string) =>
  new AppError("NOT_FOUND", `output "${outputId}" not found`, "Use the id in the output's URL (/v1/outputs/{id}), with the key that rendered it.");
/** At most this many outputs signed in one call (a page of GET /v1/jobs). */
const MAX_SIGNED = 1_000;

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
  const exp = Math.floor(Date.now() / 1000) + (metadata?.ttlSeconds || deps.ttlSeconds);
  const expiresAt = new Date(exp * 1000);
  let rowInserted = false;
  try {
    if (!metadata?.contentType) throw badRequest("the output's metadata and content type are required");
    if (metadata.ttlSeconds !== 0 && (metadata.ttlSeconds < MIN_OUTPUT_TTL_SECONDS || metadata.ttlSeconds > MAX_OUTPUT_TTL_SECONDS))
      throw badRequest(`the output's lifetime must be from ${MIN_OUTPUT_TTL_SECONDS} to ${MAX_OUTPUT_TTL_SECONDS} seconds`);
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

/**
 * Streams an output to a download: its info, then its bytes (none when the caller holds them,
 * info_only). The output's row is read first on every download: an output deleted through any
 * replica (by its key, or the sweep) is gone here too, whatever this replica's memory holds.
 */
async function getOutput(deps: StorageDeps, call: GetCall): Promise<void> {
  const { outputId, exp, sig, infoOnly } = call.request;
  const check = checkSignature(deps.signingSecret, outputId, exp, sig, Math.floor(Date.now() / 1000));
  if (check === "invalid") throw invalid();
  if (check === "expired") throw expired();
  const row = await findOutput(deps.db, outputId);
  if (!row || row.deleted_at || row.expires_at.getTime() < Date.now()) throw expired();
  const info = { contentType: row.content_type, filename: row.filename, attachment: row.attachment, expiresAt: row.expires_at };
  const writeInfo = () => call.write({ info: { ...info, sizeBytes: String(row.size_bytes), expiresAt: row.expires_at.toISOString() } });
  if (infoOnly) {
    writeInfo();
    return;
  }
  const recent = deps.recentOutputs.get(outputId);
  storageMetrics.lookup(recent !== undefined);
  if (recent) {
    writeInfo();
    await writeChunks(call, recent.bytes);
    return;
  }
  const object = await findObject(deps.bucket.jsm, deps.bucket.name, outputId);
  if (!object) throw expired();
  writeInfo();
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
 * Deletes a key's output at once: its row is marked deleted (from then on every replica's
 * downloads answer 410, getOutput reading the row first), its bytes leave this replica's memory
 * and the bucket, and its row goes last, so that a failure part-way leaves a row the same call
 * finishes when asked again.
 */
async function removeOutput(deps: StorageDeps, { outputId, keyId }: storageV1.DeleteOutputRequest): Promise<storageV1.DeleteOutputResponse> {
  if (!outputId || !keyId || !(await markDeleted(deps.db, outputId, keyId))) throw notFound(outputId);
  deps.recentOutputs.delete(outputId);
  await purgeObject(deps.bucket.jsm, deps.bucket.name, outputId);
  await deleteOutput(deps.db, outputId);
  return {};
}

/** A fresh signed URL for each of the key's outputs that still lives, to its expiry. */
async function signOutputs(deps: StorageDeps, { keyId, outputIds }: storageV1.SignOutputsRequest): Promise<storageV1.SignOutputsResponse> {
  if (!keyId) throw notFound("");
  if (outputIds.length > MAX_SIGNED) throw new AppError("PAYLOAD_INVALID", `at most ${MAX_SIGNED} outputs at once`, "Ask for fewer outputs.");
  const live = await findLiveOutputs(deps.db, keyId, [...new Set(outputIds)], new Date());
  return {
    outputs: live.map((row) => ({
      outputId: row.output_id,
      url: signedUrl(deps.publicBaseUrl, deps.signingSecret, row.output_id, Math.floor(row.expires_at.getTime() / 1000)),
      expiresAt: row.expires_at.toISOString(),
    })),
  };
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

/** A unary method: its answer, or its error as a gRPC status (logged when it is not one of ours). */
function unary<Req, Res>(deps: StorageDeps, failure: string, handle: (request: Req) => Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    handle(call.request).then(
      (response) => callback(null, response),
      (err: unknown) => {
        if (!(err instanceof AppError)) deps.logger.error({ err }, failure);
        callback(toGrpcError(err) as ServiceError);
      },
    );
  };
}

export function storageService(deps: StorageDeps): storageV1.StorageServiceServer {
  return {
    registerOutput: unary(deps, "registering an output failed", (request: storageV1.RegisterOutputRequest) => registerOutput(deps, request)),
    deleteOutput: unary(deps, "deleting an output failed", (request: storageV1.DeleteOutputRequest) => removeOutput(deps, request)),
    signOutputs: unary(deps, "signing outputs failed", (request: storageV1.SignOutputsRequest) => signOutputs(deps, request)),
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

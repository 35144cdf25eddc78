import { createHash } from "node:crypto";
import { headers, nuid, type JetStreamClient, type JetStreamManager, type PubAck } from "nats";
import { directGet } from "./direct";
import { objectStoreStream } from "./topology";

/** The object store's chunk size (nats.js's default). */
const MAX_CHUNK = 128 * 1024;
/** Chunks published ahead of their acknowledgements. */
const IN_FLIGHT = 8;

/** base64url with padding, as the object store encodes names and digests. */
const base64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64").replace(/\+/g, "-").replace(/\//g, "_");

/** The subject of one object's chunks in a bucket. */
export const objectChunkSubject = (bucket: string, id: string) => `$O.${bucket}.C.${id}`;
/** The subject of a named object's info in a bucket. */
const objectInfoSubject = (bucket: string, name: string) => `$O.${bucket}.M.${base64url(name)}`;

/** Chunks stored in a bucket under no name yet: what commitObject needs to name them. */
export interface WrittenChunks {
  /** The object's nuid: its chunks are on objectChunkSubject(bucket, nuid). */
  nuid: string;
  size: number;
  chunks: number;
  /** `SHA-256=<base64url>` of the bytes, as the object store writes it. */
  digest: string;
}

/**
 * Writes one new object's bytes into a JetStream object store bucket as
 * chunks under no name, in the object store's own format (NATS ADR-20): on
 * `$O.<bucket>.C.<nuid>`, up to IN_FLIGHT publishes ahead of their
 * acknowledgements, hashed with node's native SHA-256 (nats.js's JavaScript
 * one was most of the CPU of a large output). Resolves once JetStream has
 * every chunk. Nothing is visible under a name until commitObject names the
 * chunks; chunks never named are deleted by the bucket's max age.
 */
export async function writeObjectChunks(js: JetStreamClient, bucket: string, data: Uint8Array): Promise<WrittenChunks> {
  const id = nuid.next();
  const subject = objectChunkSubject(bucket, id);
  const hash = createHash("sha256");
  const acks: Promise<PubAck>[] = [];
  let chunks = 0;
  for (let offset = 0; offset < data.byteLength; offset += MAX_CHUNK) {
    const payload = data.subarray(offset, offset + MAX_CHUNK);
    hash.update(payload);
    chunks++;
    if (acks.length >= IN_FLIGHT) await acks.shift();
    const ack = js.publish(subject, payload);
    // Awaited in order later; a failure meanwhile must not count as unhandled.
    ack.catch(() => undefined);
    acks.push(ack);
  }
  await Promise.all(acks);
  return { nuid: id, size: data.byteLength, chunks, digest: `SHA-256=${base64url(hash.digest())}` };
}

/**
 * As writeObjectChunks, for bytes that arrive as a stream (of any piece sizes): each
 * MAX_CHUNK-sized chunk is published as soon as it is full, up to IN_FLIGHT ahead of their
 * acknowledgements, so no more than a few chunks are ever held in memory, whatever the size.
 */
export async function writeObjectStream(js: JetStreamClient, bucket: string, source: AsyncIterable<Uint8Array>): Promise<WrittenChunks> {
  const id = nuid.next();
  const subject = objectChunkSubject(bucket, id);
  const hash = createHash("sha256");
  const acks: Promise<PubAck>[] = [];
  let chunks = 0;
  let size = 0;
  const publish = async (payload: Uint8Array) => {
    hash.update(payload);
    chunks++;
    size += payload.byteLength;
    if (acks.length >= IN_FLIGHT) await acks.shift();
    const ack = js.publish(subject, payload);
    ack.catch(() => undefined);
    acks.push(ack);
  };
  let pending = Buffer.alloc(0);
  for await (const piece of source) {
    pending = pending.length === 0 ? Buffer.from(piece) : Buffer.concat([pending, piece]);
    while (pending.length >= MAX_CHUNK) {
      await publish(pending.subarray(0, MAX_CHUNK));
      pending = pending.subarray(MAX_CHUNK);
    }
  }
  if (pending.length > 0) await publish(pending);
  await Promise.all(acks);
  return { nuid: id, size, chunks, digest: `SHA-256=${base64url(hash.digest())}` };
}

/**
 * Makes written chunks visible as the object `name`: its info on
 * `$O.<bucket>.M.<base64url name>` as a subject rollup, so `ObjectStore.get`
 * and any NATS client read it. Unlike `ObjectStore.put` it does not look the
 * name up first: the caller makes sure the name is new.
 */
export async function commitObject(js: JetStreamClient, bucket: string, name: string, written: WrittenChunks): Promise<void> {
  const info = {
    name,
    description: "",
    options: { max_chunk_size: MAX_CHUNK },
    bucket,
    nuid: written.nuid,
    size: written.size,
    chunks: written.chunks,
    mtime: new Date().toISOString(),
    digest: written.digest,
    deleted: false,
  };
  const h = headers();
  h.set("Nats-Rollup", "sub");
  await js.publish(objectInfoSubject(bucket, name), JSON.stringify(info), { headers: h });
}

/** Removes chunks that were never named. */
export async function purgeObjectChunks(jsm: JetStreamManager, bucket: string, id: string): Promise<void> {
  await jsm.streams.purge(objectStoreStream(bucket), { filter: objectChunkSubject(bucket, id) });
}

/**
 * Removes a named object whole: its chunks, then its info, so that nothing of
 * it stays in the stream (ObjectStore.delete leaves its info behind, marked
 * deleted). Nothing happens when there is none; a failure part-way leaves
 * what a second call removes.
 */
export async function purgeObject(jsm: JetStreamManager, bucket: string, name: string): Promise<void> {
  const stream = objectStoreStream(bucket);
  const infoSubject = objectInfoSubject(bucket, name);
  const msg = await directGet(jsm, stream, { last_by_subj: infoSubject });
  if (!msg) return;
  const { nuid } = msg.json<{ nuid?: string }>();
  // A nuid names one object's chunks: anything else (a wildcard) could reach others'.
  if (nuid && /^[A-Za-z0-9]{22}$/.test(nuid)) await jsm.streams.purge(stream, { filter: objectChunkSubject(bucket, nuid) });
  await jsm.streams.purge(stream, { filter: infoSubject });
}

/** A named object as its info message describes it (ADR-20). */
export interface StoredObject extends WrittenChunks {
  name: string;
}

/** The object named `name`, by one direct get of its info; undefined when there is none or it was deleted. */
export async function findObject(jsm: JetStreamManager, bucket: string, name: string): Promise<StoredObject | undefined> {
  const msg = await directGet(jsm, objectStoreStream(bucket), { last_by_subj: objectInfoSubject(bucket, name) });
  if (!msg) return undefined;
  const info = msg.json<StoredObject & { deleted?: boolean }>();
  return info.deleted ? undefined : { name: info.name, nuid: info.nuid, size: info.size, chunks: info.chunks, digest: info.digest };
}

/** The digest's bytes: the object store writes base64url; other clients may write base64 or hex. */
function digestBytes(digest: string): Buffer | undefined {
  if (!digest.startsWith("SHA-256=")) return undefined;
  const value = digest.slice("SHA-256=".length);
  return /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, "hex") : Buffer.from(value, "base64");
}

/**
 * An object's bytes, chunk by chunk in order, each by one direct get: no
 * consumer is made, and the digest is checked with node's SHA-256 (reading
 * through nats.js's ObjectStore.get cost six times the CPU for a 1 MB
 * object). Throws after the last chunk when the bytes do not match the
 * object's size and digest, and at once when a chunk is missing.
 */
export async function* readObject(jsm: JetStreamManager, bucket: string, object: StoredObject): AsyncGenerator<Uint8Array> {
  const expected = digestBytes(object.digest);
  if (!expected) throw new Error(`object ${object.name}: unknown digest ${object.digest}`);
  const stream = objectStoreStream(bucket);
  const subject = objectChunkSubject(bucket, object.nuid);
  const hash = createHash("sha256");
  let size = 0;
  let seq = 0;
  for (let chunk = 1; chunk <= object.chunks; chunk++) {
    const msg = await directGet(jsm, stream, { seq: seq + 1, next_by_subj: subject });
    if (!msg) throw new Error(`object ${object.name}: chunk ${chunk} of ${object.chunks} is missing`);
    seq = msg.seq;
    hash.update(msg.data);
    size += msg.data.length;
    yield msg.data;
  }
  if (size !== object.size || !hash.digest().equals(expected)) throw new Error(`object ${object.name}: its bytes do not match its size and digest`);
}

import { createHash, type Hash } from "node:crypto";
import { headers, nuid, type JetStreamClient, type JetStreamManager, type PubAck } from "nats";

/** The object store's chunk size (nats.js's default). */
const MAX_CHUNK = 128 * 1024;
/** Chunks published ahead of their acknowledgements. */
const IN_FLIGHT = 8;

/** base64url with padding, as the object store encodes names and digests. */
const base64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64").replace(/\+/g, "-").replace(/\//g, "_");

export interface ObjectTarget {
  js: JetStreamClient;
  jsm: JetStreamManager;
  bucket: string;
}

/**
 * Writes one new object into a JetStream object store bucket, in the object
 * store's own format (NATS ADR-20), so `ObjectStore.get` and any NATS client
 * read it: the chunks on `$O.<bucket>.C.<nuid>`, then, on commit, the
 * object's info on `$O.<bucket>.M.<base64url name>` as a subject rollup.
 * Unlike `ObjectStore.put` it does not look the name up first (the caller
 * makes sure the name is new, see putOutput) and hashes with node's native
 * SHA-256 rather than nats.js's JavaScript one, which was most of storage's
 * CPU for large outputs. Until commit() nothing is visible under the name;
 * abort() removes the chunks.
 */
export class ObjectWriter {
  private readonly hash: Hash = createHash("sha256");
  private readonly nuid = nuid.next();
  private readonly acks: Promise<PubAck>[] = [];
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private chunks = 0;
  size = 0;

  constructor(
    private readonly target: ObjectTarget,
    private readonly name: string,
  ) {}

  private get chunkSubject(): string {
    return `$O.${this.target.bucket}.C.${this.nuid}`;
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.buffered.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    this.bufferedBytes += bytes.byteLength;
    while (this.bufferedBytes >= MAX_CHUNK) await this.publishChunk(MAX_CHUNK);
  }

  /** Publishes what is buffered and waits until JetStream has every chunk. */
  async flush(): Promise<void> {
    if (this.bufferedBytes > 0) await this.publishChunk(this.bufferedBytes);
    await Promise.all(this.acks.splice(0));
  }

  /** Makes the object visible under its name. */
  async commit(): Promise<void> {
    await this.flush();
    const info = {
      name: this.name,
      description: "",
      options: { max_chunk_size: MAX_CHUNK },
      bucket: this.target.bucket,
      nuid: this.nuid,
      size: this.size,
      chunks: this.chunks,
      mtime: new Date().toISOString(),
      digest: `SHA-256=${base64url(this.hash.digest())}`,
      deleted: false,
    };
    const h = headers();
    h.set("Nats-Rollup", "sub");
    await this.target.js.publish(`$O.${this.target.bucket}.M.${base64url(this.name)}`, JSON.stringify(info), { headers: h });
  }

  /** Removes the chunks written so far. */
  async abort(): Promise<void> {
    await Promise.allSettled(this.acks.splice(0));
    await this.target.jsm.streams.purge(`OBJ_${this.target.bucket}`, { filter: this.chunkSubject });
  }

  private async publishChunk(length: number): Promise<void> {
    const all = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered, this.bufferedBytes);
    const payload = all.subarray(0, length);
    const rest = all.subarray(length);
    this.buffered = rest.length > 0 ? [rest] : [];
    this.bufferedBytes = rest.length;
    this.hash.update(payload);
    this.chunks++;
    this.size += payload.length;
    if (this.acks.length >= IN_FLIGHT) await this.acks.shift();
    const ack = this.target.js.publish(this.chunkSubject, payload);
    // Awaited in order later; a failure meanwhile must not count as unhandled.
    ack.catch(() => undefined);
    this.acks.push(ack);
  }
}

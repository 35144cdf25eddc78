import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { connect, StorageType, type JetStreamClient, type JetStreamManager, type NatsConnection, type ObjectStore } from "nats";
import { DEFAULT_NATS_URL } from "../config";
import { commitObject, findObject, purgeObject, purgeObjectChunks, readObject, writeObjectChunks, writeObjectStream, type StoredObject } from "./object-chunks";
import { objectStoreStream } from "./topology";

const NATS_URL = process.env.NATS_URL ?? DEFAULT_NATS_URL;

async function readAll(jsm: JetStreamManager, bucket: string, object: StoredObject): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of readObject(jsm, bucket, object)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * Objects written and read in the object store's own format (NATS ADR-20)
 * against a real JetStream (NATS_URL): what this code writes, nats.js's
 * ObjectStore reads, and the reverse, and a read checks size and digest.
 */
describe("object store chunks: written under no name, named, read by direct get", () => {
  const bucket = `chunks_test_${randomBytes(6).toString("hex")}`;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let store: ObjectStore;

  const write = async (bytes: Uint8Array, name: string) => {
    const written = await writeObjectChunks(js, bucket, bytes);
    await commitObject(js, bucket, name, written);
    return written;
  };

  before(async () => {
    nc = await connect({ servers: NATS_URL }).catch((err: unknown) => {
      throw new Error(`no NATS with JetStream at ${NATS_URL} (start one, or set NATS_URL): ${(err as Error).message}`);
    });
    js = nc.jetstream();
    jsm = await nc.jetstreamManager();
    store = await js.views.os(bucket, { storage: StorageType.Memory });
  });

  after(async () => {
    await store?.destroy();
    await nc?.close();
  });

  it("what it writes, nats.js reads, and it reads back the same bytes in 128 KiB chunks", async () => {
    const bytes = randomBytes(300_000);
    const written = await write(bytes, "out_a");
    assert.deepEqual({ size: written.size, chunks: written.chunks }, { size: bytes.length, chunks: 3 });
    const object = await findObject(jsm, bucket, "out_a");
    assert.deepEqual(object, { name: "out_a", ...written });
    assert.ok((await readAll(jsm, bucket, object!)).equals(bytes));

    const viaNats = await store.get("out_a");
    const reader = viaNats!.data.getReader();
    const read: Uint8Array[] = [];
    for (let next = await reader.read(); !next.done; next = await reader.read()) read.push(next.value);
    await viaNats!.error;
    assert.ok(Buffer.concat(read).equals(bytes), "nats.js checks the digest and agrees");
  });

  it("a stream of pieces of any size is written in 128 KiB chunks, as the same bytes would be at once", async () => {
    const bytes = randomBytes(400_000);
    async function* pieces() {
      for (let offset = 0; offset < bytes.length; offset += 7_777) yield bytes.subarray(offset, offset + 7_777);
    }
    const streamed = await writeObjectStream(js, bucket, pieces());
    const atOnce = await writeObjectChunks(js, bucket, bytes);
    assert.deepEqual({ size: streamed.size, chunks: streamed.chunks, digest: streamed.digest }, { size: atOnce.size, chunks: 4, digest: atOnce.digest });
    await commitObject(js, bucket, "out_streamed", streamed);
    const object = await findObject(jsm, bucket, "out_streamed");
    assert.ok((await readAll(jsm, bucket, object!)).equals(bytes));
  });

  it("reads an object nats.js put, and finds no object that is missing or deleted", async () => {
    const bytes = randomBytes(200_000);
    await store.putBlob({ name: "out_by_nats" }, bytes);
    const object = await findObject(jsm, bucket, "out_by_nats");
    assert.ok(object);
    assert.ok((await readAll(jsm, bucket, object)).equals(bytes));
    assert.equal(await findObject(jsm, bucket, "out_never"), undefined);
    await store.delete("out_by_nats");
    assert.equal(await findObject(jsm, bucket, "out_by_nats"), undefined);
  });

  it("a read fails when the bytes do not match the digest, or a chunk is gone", async () => {
    const written = await write(randomBytes(1_000), "out_tampered");
    const object = (await findObject(jsm, bucket, "out_tampered"))!;
    const wrong = { ...object, digest: `SHA-256=${Buffer.alloc(32).toString("base64url")}=` };
    await assert.rejects(readAll(jsm, bucket, wrong), /do not match its size and digest/);
    await assert.rejects(readAll(jsm, bucket, { ...object, size: object.size + 1 }), /do not match its size and digest/);
    await assert.rejects(readAll(jsm, bucket, { ...object, digest: "MD5=x" }), /unknown digest/);
    await purgeObjectChunks(jsm, bucket, written.nuid);
    await assert.rejects(readAll(jsm, bucket, object), /chunk 1 of 1 is missing/);
  });

  it("purging an object removes its chunks and its info, leaving no message of it in the stream; a second purge does nothing", async () => {
    const stream = objectStoreStream(bucket);
    const messages = async () => (await jsm.streams.info(stream)).state.messages;
    const before = await messages();
    const kept = await write(randomBytes(1_000), "out_kept");
    await write(randomBytes(300_000), "out_purged");
    assert.equal(await messages(), before + 2 + 4);
    await purgeObject(jsm, bucket, "out_purged");
    assert.equal(await findObject(jsm, bucket, "out_purged"), undefined);
    assert.equal(await messages(), before + 2, "no chunk and no info of it left (a deleted object's info would stay)");
    await purgeObject(jsm, bucket, "out_purged");
    await purgeObject(jsm, bucket, "out_never");
    assert.deepEqual(await findObject(jsm, bucket, "out_kept"), { name: "out_kept", ...kept }, "other objects stay");
  });
});

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { storageV1 } from "@pressroom/contracts";
import {
  createDb,
  createGrpcClient,
  createLogger,
  call,
  ensureGrpcCertificates,
  fromGrpcError,
  migrateToLatest,
  newId,
  startGrpcServer,
  writeObjectChunks,
  type GrpcCertificates,
  DEFAULT_NATS_URL,
  type GrpcServerHandle,
} from "@pressroom/platform";
import { RecentOutputs, storeOutput } from "@pressroom/domain";
import { isolatedDatabase } from "@pressroom/stack";
import type { Kysely } from "kysely";
import { connect, type JetStreamClient, type NatsConnection, type ObjectStore } from "nats";
import type { StorageDb } from "../db";
import { migrations } from "../migrations";
import { createServer } from "../server";
import { sweepExpired } from "./expiry-sweep";
import { openOutputStore } from "./output-store";
import type { StorageDeps } from "../deps";
import { signedUrl } from "./signing";

const MiB = 1024 * 1024;

interface Served {
  server: GrpcServerHandle;
  /** A client with render's certificate (registers outputs) and one with the gateway's (downloads them). */
  render: storageV1.StorageServiceClient;
  gateway: storageV1.StorageServiceClient;
  /** The gateway's too: it deletes and signs outputs for their keys. */
  deleter: storageV1.StorageServiceClient;
  deps: StorageDeps;
}

/** A storage gRPC server on a free port, and its two callers' clients. */
async function serve(deps: StorageDeps, certificates: GrpcCertificates): Promise<Served> {
  const server = await startGrpcServer({ port: 0, host: "127.0.0.1", tls: certificates.storage, services: createServer(deps) });
  const client = (peer: "render" | "gateway") => createGrpcClient(storageV1.StorageServiceClient, `127.0.0.1:${server.port}`, certificates[peer], "storage");
  return { server, render: client("render"), gateway: client("gateway"), deleter: client("gateway"), deps };
}

const METADATA: storageV1.OutputMetadata = {
  outputId: "",
  contentType: "application/pdf",
  filename: "doc.pdf",
  jobId: "job_test",
  keyId: "key_test",
  attachment: false,
  ttlSeconds: 0,
};

/** Downloads through a signed URL's parameters, as the gateway does. */
async function download(client: storageV1.StorageServiceClient, url: string): Promise<{ info: storageV1.OutputInfo; bytes: Buffer; chunks: number }> {
  const { pathname, searchParams } = new URL(url);
  const outputId = decodeURIComponent(pathname.split("/").pop()!);
  const stream = client.getOutput({ outputId, exp: searchParams.get("exp")!, sig: searchParams.get("sig")!, infoOnly: false });
  let info: storageV1.OutputInfo | undefined;
  const chunks: Buffer[] = [];
  try {
    for await (const message of stream as AsyncIterable<storageV1.GetOutputResponse>) {
      if (message.info) info = message.info;
      if (message.chunk) chunks.push(message.chunk);
    }
  } catch (err) {
    throw fromGrpcError(err);
  }
  assert.ok(info, "the stream starts with the output's info");
  return { info, bytes: Buffer.concat(chunks), chunks: chunks.length };
}

const expectExpired = (promise: Promise<unknown>) => assert.rejects(promise, (err: unknown) => (err as { code?: string }).code === "URL_EXPIRED");

/**
 * RegisterOutput and GetOutput over gRPC against a real PostgreSQL and
 * JetStream object store (NATS_URL, DATABASE_URL), the chunks written as a
 * render worker writes them, with the recent outputs in memory. A download
 * is shown to come from memory by deleting the object from the store behind
 * the server's back.
 */
describe("storage gRPC: outputs registered from written chunks, recent ones served from memory", () => {
  const secret = randomBytes(32).toString("hex");
  const bucket = `outputs_test_${randomBytes(6).toString("hex")}`;
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<StorageDb>;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let store: ObjectStore;
  let cached: Served;
  let uncached: Served;
  const tlsDir = mkdtempSync(path.join(tmpdir(), "pressroom-storage-tls-"));

  const put = (side: typeof cached, bytes: Buffer, metadata: Partial<storageV1.OutputMetadata> = {}) =>
    storeOutput({ storage: side.render, js, bucket }, { ...METADATA, ...metadata }, bytes);
  const messages = async () => (await (await nc.jetstreamManager()).streams.info(`OBJ_${bucket}`)).state.messages;

  before(async () => {
    database = await isolatedDatabase("pressroom_storage_test");
    db = createDb<StorageDb>({ url: database.url, schema: "storage" });
    await migrateToLatest(db, "storage", migrations);
    nc = await connect({ servers: process.env.NATS_URL ?? DEFAULT_NATS_URL });
    js = nc.jetstream();
    store = await openOutputStore(js, bucket);
    const jsm = await nc.jetstreamManager();
    const deps = (recentOutputs: RecentOutputs): StorageDeps => ({
      db,
      store,
      bucket: { js, jsm, name: bucket },
      logger: createLogger("storage", "silent"),
      publicBaseUrl: "http://localhost:8080",
      signingSecret: secret,
      ttlSeconds: 3_600,
      recentOutputs,
      sweepIntervalMs: 60_000,
    });
    // Both servers share the database and the object store; only the memory differs.
    const certificates = await ensureGrpcCertificates(tlsDir, ["storage", "render", "gateway"]);
    cached = await serve(deps(new RecentOutputs({ maxBytes: 8 * MiB, maxEntryBytes: 4 * MiB })), certificates);
    uncached = await serve(deps(new RecentOutputs({ maxBytes: 0, maxEntryBytes: 4 * MiB })), certificates);
  });

  after(async () => {
    for (const side of [cached, uncached]) {
      side?.render.close();
      side?.gateway.close();
      side?.deleter.close();
      await side?.server.stop(1_000);
    }
    await store?.destroy();
    await nc?.close();
    await db?.destroy();
    await database?.drop();
    rmSync(tlsDir, { recursive: true, force: true });
  });

  it("registered chunks are an object any object store client reads, with its row's info; the next download comes from memory", async () => {
    const bytes = randomBytes(3 * MiB + 17);
    const stored = await put(cached, bytes, { contentType: "image/png", filename: "card.png", attachment: true });
    assert.equal(stored.sizeBytes, String(bytes.length));
    const object = await store.get(stored.outputId);
    assert.ok(object, "named in the bucket");
    const read: Uint8Array[] = [];
    const reader = object.data.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) read.push(next.value);
    await object.error;
    assert.ok(Buffer.concat(read).equals(bytes), "nats.js reads it, digest checked");

    const first = await download(cached.gateway, stored.url);
    assert.deepEqual(first.info, {
      contentType: "image/png",
      filename: "card.png",
      attachment: true,
      sizeBytes: String(bytes.length),
      expiresAt: stored.expiresAt,
    });
    assert.ok(first.bytes.equals(bytes), "bytes intact");
    assert.equal(first.chunks, Math.ceil(bytes.length / (128 * 1024)));

    await store.delete(stored.outputId);
    const again = await download(cached.gateway, stored.url);
    assert.ok(again.bytes.equals(bytes), "served from memory");
    assert.deepEqual(again.info, first.info);
    assert.equal(again.chunks, first.chunks);
  });

  it("with the memory off, every download reads the store: the object gone, it is 410", async () => {
    const bytes = randomBytes(200_000);
    const stored = await put(uncached, bytes);
    const downloaded = await download(uncached.gateway, stored.url);
    assert.ok(downloaded.bytes.equals(bytes));
    assert.equal(downloaded.info.attachment, false, "inline unless the request named the file");
    await store.delete(stored.outputId);
    await expectExpired(download(uncached.gateway, stored.url));
  });

  it("an output over the per-entry cap is read from the store every time", async () => {
    const bytes = randomBytes(4 * MiB + 1);
    const stored = await put(cached, bytes);
    assert.ok((await download(cached.gateway, stored.url)).bytes.equals(bytes));
    await store.delete(stored.outputId);
    await expectExpired(download(cached.gateway, stored.url));
  });

  it("registering under an existing id fails and changes nothing: the first output stays, the new chunks are removed", async () => {
    const outputId = newId("out");
    const original = randomBytes(1_000);
    await put(uncached, original, { outputId });
    const before = await messages();
    // The same id again: the row insert fails on the primary key before the object is named.
    await assert.rejects(put(cached, randomBytes(300_000), { outputId }), (err: unknown) => (err as { code?: string }).code === "INTERNAL_ERROR");
    assert.equal(await messages(), before, "the failed output's chunks were removed");
    const url = signedUrl("http://localhost:8080", secret, outputId, Math.floor(Date.now() / 1000) + 3_600);
    assert.ok((await download(uncached.gateway, url)).bytes.equals(original), "the first output is intact");
    await store.delete(outputId);
    await expectExpired(download(cached.gateway, url));
  });

  it("refuses malformed chunks or metadata with PAYLOAD_INVALID, naming nothing and removing the chunks", async () => {
    const written = await writeObjectChunks(js, bucket, randomBytes(1_000));
    const chunks = { nuid: written.nuid, sizeBytes: String(written.size), chunks: written.chunks, digest: written.digest };
    const register = (request: storageV1.RegisterOutputRequest) => call(cached.render, cached.render.registerOutput, request);
    const refused = (err: unknown) => (err as { code?: string }).code === "PAYLOAD_INVALID";
    const before = await messages();
    for (const nuid of ["", ">", "*", `${written.nuid}.x`, "a".repeat(21)]) {
      await assert.rejects(register({ metadata: METADATA, chunks: { ...chunks, nuid } }), refused, `nuid ${JSON.stringify(nuid)}`);
    }
    assert.equal(await messages(), before, "a malformed nuid names no chunks to remove");
    await assert.rejects(register({ metadata: { ...METADATA, contentType: "" }, chunks }), refused);
    assert.equal(await messages(), before - 1, "the refused registration's chunk was removed");
    await assert.rejects(register({ metadata: METADATA, chunks: { ...chunks, sizeBytes: "0" } }), refused);
    await assert.rejects(register({ metadata: METADATA, chunks: { ...chunks, digest: "MD5=x" } }), refused);
    assert.deepEqual(await store.list().then((list) => list.filter((entry) => entry.nuid === written.nuid)), [], "nothing named");
  });

  it("the sweep drops the outputs it deletes from memory", async () => {
    const stored = await put(cached, randomBytes(1_000));
    await download(cached.gateway, stored.url);
    assert.ok(cached.deps.recentOutputs.get(stored.outputId));
    // Due now, as if its time had passed; the signed URL itself stays valid.
    await db
      .updateTable("outputs")
      .set({ expires_at: new Date(Date.now() - 1_000) })
      .where("output_id", "=", stored.outputId)
      .execute();
    assert.ok((await sweepExpired(cached.deps)) >= 1);
    assert.equal(cached.deps.recentOutputs.get(stored.outputId), undefined);
    await expectExpired(download(cached.gateway, stored.url));
  });

  it("an output lives as long as its metadata asks (60 s to 7 days), its URL with it; out of those bounds is PAYLOAD_INVALID", async () => {
    const stored = await put(cached, randomBytes(1_000), { ttlSeconds: 120 });
    const exp = Number(new URL(stored.url).searchParams.get("exp"));
    assert.ok(Math.abs(exp - (Date.now() / 1000 + 120)) < 5, "exp is 120 s ahead");
    assert.equal(stored.expiresAt, new Date(exp * 1000).toISOString());
    const [row] = await db.selectFrom("outputs").select("expires_at").where("output_id", "=", stored.outputId).execute();
    assert.equal(row!.expires_at.toISOString(), stored.expiresAt, "the row expires with the URL");
    const long = await put(cached, randomBytes(1_000), { ttlSeconds: 604_800 });
    assert.ok(Math.abs(Date.parse(long.expiresAt) - (Date.now() + 604_800_000)) < 5_000);
    const byDefault = await put(cached, randomBytes(1_000));
    assert.ok(Math.abs(Date.parse(byDefault.expiresAt) - (Date.now() + 3_600_000)) < 5_000, "0: storage's own lifetime");
    for (const ttlSeconds of [59, 604_801, -1]) {
      await assert.rejects(
        put(cached, randomBytes(1_000), { ttlSeconds }),
        (err: unknown) => (err as { code?: string }).code === "PAYLOAD_INVALID",
        String(ttlSeconds),
      );
    }
  });

  it("info_only answers the info without the bytes, after the same checks", async () => {
    const stored = await put(cached, randomBytes(1_000));
    const { pathname, searchParams } = new URL(stored.url);
    const request = { outputId: pathname.split("/").pop()!, exp: searchParams.get("exp")!, sig: searchParams.get("sig")!, infoOnly: true };
    const read = async (r: storageV1.GetOutputRequest) => {
      const messages: storageV1.GetOutputResponse[] = [];
      for await (const message of cached.gateway.getOutput(r) as AsyncIterable<storageV1.GetOutputResponse>) messages.push(message);
      return messages;
    };
    const messages = await read(request);
    assert.equal(messages.length, 1);
    assert.equal(messages[0]!.info?.sizeBytes, "1000");
    await assert.rejects(read({ ...request, sig: "0".repeat(64) }), (err: unknown) => fromGrpcError(err).code === "URL_INVALID");
  });

  it("a delete by the output's key removes its row and bytes at once; every replica then answers 410, whatever its memory holds", async () => {
    const bytes = randomBytes(1_000);
    const stored = await put(cached, bytes, { keyId: "key_owner" });
    // Downloaded once through the first replica, which keeps it in memory.
    assert.ok((await download(cached.gateway, stored.url)).bytes.equals(bytes));
    assert.ok(cached.deps.recentOutputs.get(stored.outputId), "in the first replica's memory");
    const remove = (side: Served, outputId: string, keyId: string) => call(side.deleter, side.deleter.deleteOutput, { outputId, keyId });
    const notFound = (err: unknown) => (err as { code?: string }).code === "NOT_FOUND";

    await assert.rejects(remove(uncached, stored.outputId, "key_other"), notFound, "another key's output is not found");
    await assert.rejects(remove(uncached, stored.outputId, ""), notFound);
    assert.ok((await download(cached.gateway, stored.url)).bytes.equals(bytes), "and stays");

    // Deleted through the other replica: this one's memory still holds the bytes, its downloads answer 410.
    await remove(uncached, stored.outputId, "key_owner");
    assert.ok(cached.deps.recentOutputs.get(stored.outputId), "still in the first replica's memory");
    await expectExpired(download(cached.gateway, stored.url));
    await expectExpired(download(uncached.gateway, stored.url));
    assert.deepEqual(await db.selectFrom("outputs").selectAll().where("output_id", "=", stored.outputId).execute(), [], "no row");
    assert.equal(await store.get(stored.outputId), null, "no object");
    assert.deepEqual(
      (await store.list()).filter((entry) => entry.name === stored.outputId),
      [],
      "nothing of it listed",
    );
    await assert.rejects(remove(cached, stored.outputId, "key_owner"), notFound, "deleted once: not found after");
  });

  it("signs fresh URLs for the key's outputs that live, to their expiry, and for no other", async () => {
    const live = await put(cached, randomBytes(1_000), { keyId: "key_signer", ttlSeconds: 600 });
    const other = await put(cached, randomBytes(1_000), { keyId: "key_else" });
    const expiredOne = await put(cached, randomBytes(1_000), { keyId: "key_signer" });
    await db
      .updateTable("outputs")
      .set({ expires_at: new Date(Date.now() - 1_000) })
      .where("output_id", "=", expiredOne.outputId)
      .execute();
    const deleted = await put(cached, randomBytes(1_000), { keyId: "key_signer" });
    await call(cached.deleter, cached.deleter.deleteOutput, { outputId: deleted.outputId, keyId: "key_signer" });
    const signed = await call(cached.deleter, cached.deleter.signOutputs, {
      keyId: "key_signer",
      outputIds: [live.outputId, other.outputId, expiredOne.outputId, deleted.outputId, "out_never", live.outputId],
    });
    assert.deepEqual(signed.outputs, [{ outputId: live.outputId, url: live.url, expiresAt: live.expiresAt }], "the same URL, signed again to the same expiry");
    assert.ok((await download(cached.gateway, signed.outputs[0]!.url)).bytes.length === 1_000);
    assert.deepEqual((await call(cached.deleter, cached.deleter.signOutputs, { keyId: "key_signer", outputIds: [] })).outputs, []);
  });
});

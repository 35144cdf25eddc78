import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { CONSUMERS, RETIRED_CONSUMERS, STREAMS, ensureGrpcCertificates, grpcTlsEnv, objectStoreStream, streams as streamNames } from "@pressroom/platform";
import {
  REPO_ROOT,
  databaseCredentials,
  distinctFreePorts,
  isolatedDatabase,
  provisionNats,
  runMigrations,
  startPrivateNats,
  startService,
  stopService,
  waitFor,
  waitReady,
  type PrivateNats,
  type ServiceProcess,
} from "@pressroom/stack";
import { AckPolicy, connect, type JetStreamManager, type NatsConnection } from "nats";

/**
 * NATS topology is provisioned by a one-off step (the chart's provision Job,
 * the local stack), never by the services: a service started before it is
 * live but not ready, and says what is missing.
 */
describe("one-off NATS provisioning", () => {
  let workDir: string;
  let nats: PrivateNats;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let database: { url: string; drop(): Promise<void> };
  let databaseUrls: Record<"storage" | "metering", string>;
  const started: ServiceProcess[] = [];

  before(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), "pressroom-provision-"));
    nats = await startPrivateNats(path.join(workDir, "nats"));
    nc = await connect({ servers: nats.url });
    jsm = await nc.jetstreamManager();
    database = await isolatedDatabase();
    const credentials = databaseCredentials(database.url, () => randomBytes(16).toString("hex"));
    databaseUrls = credentials.urls;
    await runMigrations(credentials, randomBytes(32).toString("hex"));
  });

  after(async () => {
    for (const proc of started) await stopService(proc.child, 10_000);
    await nc?.close();
    await nats?.stop();
    await database?.drop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it("services are live but not ready before it runs, name what is missing, and become ready after", async () => {
    const [storageGrpc, storageHealth, meteringGrpc, meteringHealth] = (await distinctFreePorts(4)) as [number, number, number, number];
    const common = { PATH: process.env.PATH, NATS_URL: nats.url, LOG_LEVEL: "info" };
    const certificates = await ensureGrpcCertificates(path.join(workDir, "grpc-tls"), ["storage", "metering"]);
    const storage = startService(
      "storage",
      {
        ...common,
        DATABASE_URL: databaseUrls.storage,
        ...grpcTlsEnv(certificates.storage),
        GRPC_PORT: String(storageGrpc),
        HEALTH_PORT: String(storageHealth),
        OUTPUT_SIGNING_SECRET: "s".repeat(32),
      },
      path.join(workDir, "logs"),
    );
    const metering = startService(
      "metering",
      {
        ...common,
        DATABASE_URL: databaseUrls.metering,
        ...grpcTlsEnv(certificates.metering),
        GRPC_PORT: String(meteringGrpc),
        HEALTH_PORT: String(meteringHealth),
        BILLING_PROVIDER: "local",
      },
      path.join(workDir, "logs"),
    );
    started.push(storage, metering);

    for (const [proc, healthPort, missing] of [
      [
        storage,
        storageHealth,
        /JetStream topology missing: stream BATCHES, consumer BATCHES\/storage-archives, object store outputs; run the provisioning step/,
      ],
      [
        metering,
        meteringHealth,
        /JetStream topology missing: stream JOBS, stream ACCOUNTS, stream BATCHES, consumer JOBS\/metering-jobs, consumer BATCHES\/metering-batches; run the provisioning step/,
      ],
    ] as const) {
      await waitFor(`${proc.name} to report what is missing`, async () => missing.test(proc.output.join("")), 30_000);
      assert.equal((await fetch(`http://127.0.0.1:${healthPort}/livez`)).status, 200, `${proc.name} is live`);
      const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
      assert.equal(ready.status, 503, `${proc.name} is not ready`);
      assert.deepEqual(Object.keys((await ready.json()) as object), ["error", "code", "hint"]);
    }
    assert.deepEqual((await jsm.streams.names().next()).sort(), [], "no service created a stream");

    await provisionNats(nats.url);
    await waitReady("storage", storageHealth, storage.child);
    await waitReady("metering", meteringHealth, metering.child);
    assert.match(metering.output.join(""), /JetStream topology in place/);
  });

  it("creates every stream, consumer and the output bucket, and running it again changes nothing", async () => {
    await provisionNats(nats.url);
    const configs = async () => {
      const streams = await Promise.all(
        [...STREAMS.map((s) => s.name), objectStoreStream("outputs")].map(async (name) => (await jsm.streams.info(name)).config),
      );
      const consumers = await Promise.all(CONSUMERS.map(async (c) => (await jsm.consumers.info(c.stream, c.config.durable_name)).config));
      return { streams, consumers };
    };
    const first = await configs();
    assert.equal(first.streams.length, STREAMS.length + 1);
    assert.ok(first.streams.every((config) => config.num_replicas === 1));
    const bucket = first.streams.at(-1)!;
    assert.equal(bucket.max_age, (604_800 + 3_600) * 1e9, "the bucket outlives the longest an output may live (7 days, when its request asks) by an hour");

    await provisionNats(nats.url);
    assert.deepEqual(await configs(), first);
  });

  it("deletes the durable consumers an earlier version made that nothing reads any more", async () => {
    await provisionNats(nats.url);
    for (const { stream, name } of RETIRED_CONSUMERS) await jsm.consumers.add(stream, { durable_name: name, ack_policy: AckPolicy.Explicit });
    await provisionNats(nats.url);
    for (const { stream, name } of RETIRED_CONSUMERS) {
      await assert.rejects(jsm.consumers.info(stream, name), /consumer not found/, `${stream}/${name} is gone`);
    }
    const names: string[] = [];
    for await (const info of jsm.consumers.list(streamNames.JOBS)) names.push(info.name);
    assert.deepEqual(
      names.sort(),
      CONSUMERS.filter((c) => c.stream === streamNames.JOBS)
        .map((c) => c.config.durable_name)
        .sort(),
      "JOBS keeps its consumers",
    );
  });

  it("updates a changed setting in place", async () => {
    await provisionNats(nats.url, { OUTPUT_TTL_SECONDS: "864000" });
    assert.equal((await jsm.streams.info(objectStoreStream("outputs"))).config.max_age, (864_000 + 3_600) * 1e9, "a default lifetime past 7 days");
  });

  it("keeps a render command at most the queue's maximum wait (RENDER_MAX_QUEUE_WAIT_MS, default an hour)", async () => {
    await provisionNats(nats.url);
    assert.equal((await jsm.streams.info(streamNames.RENDER)).config.max_age, 3_600 * 1e9);
    await provisionNats(nats.url, { RENDER_MAX_QUEUE_WAIT_MS: "600000" });
    assert.equal((await jsm.streams.info(streamNames.RENDER)).config.max_age, 600 * 1e9);
  });

  it("fails with a clear message when asked for more replicas than the cluster has", async () => {
    await assert.rejects(provisionNats(nats.url, { NATS_STREAM_REPLICAS: "3" }), (err: Error) => {
      assert.match(err.message, /NATS provisioning failed: .*replicas/i);
      return true;
    });
  });

  it("fails on a nonsensical replica count before it connects", async () => {
    await assert.rejects(provisionNats(nats.url, { NATS_STREAM_REPLICAS: "7" }), /NATS_STREAM_REPLICAS: at most 5/);
  });

  it("no service provisions at start", () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (
          /\.ts$/.test(entry.name) &&
          !/\.test\.ts$/.test(entry.name) &&
          /provisionTopology|streams\.add\(|views\.os\([^)]*,/.test(readFileSync(file, "utf8"))
        )
          offenders.push(path.relative(REPO_ROOT, file));
      }
    };
    for (const service of readdirSync(path.join(REPO_ROOT, "services"))) walk(path.join(REPO_ROOT, "services", service, "src"));
    assert.deepEqual(offenders, []);
  });
});

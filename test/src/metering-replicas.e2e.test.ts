import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { jobEventsV1, meteringV1 } from "@pressroom/contracts";
import {
  call,
  createDb,
  createGrpcClient,
  ensureGrpcCertificates,
  grpcTlsEnv,
  migrateToLatest,
  newId,
  publishEvent,
  subjects,
  type GrpcCertificates,
} from "@pressroom/platform";
import { appendJobEvent, jobEvent } from "@pressroom/domain";
import {
  distinctFreePorts,
  isolatedDatabase,
  provisionNats,
  startPrivateNats,
  startService,
  stopChild,
  waitFor,
  waitReady,
  type PrivateNats,
  type ServiceProcess,
} from "@pressroom/stack";
import { connect, type NatsConnection } from "nats";
import { migrations } from "../../services/metering/src/migrations";

/**
 * Exactness of admission across two metering processes: both serve the same
 * PostgreSQL and NATS, every test fires its calls in parallel over real gRPC,
 * alternating between the two. With R units left and N > R parallel renders,
 * exactly R are admitted; the same for concurrency slots and the rate window.
 * Slots come back through the job events on JetStream, once per event.
 */

const { Decision } = meteringV1;

interface Replica {
  proc: ServiceProcess;
  /** As the gateway, which admits. */
  client: meteringV1.MeteringServiceClient;
  /** As the operator CLI, which sets usage. */
  admin: meteringV1.MeteringServiceClient;
}

describe("admission across two metering processes", () => {
  let database: { url: string; drop(): Promise<void> };
  let nats: PrivateNats;
  let nc: NatsConnection;
  let workDir: string;
  let certificates: GrpcCertificates;
  const replicas: (Replica & { grpcPort: number; healthPort: number })[] = [];
  const keyId = () => newId("key");

  /** The i-th of n parallel calls goes to replica i mod 2. */
  const on = (i: number) => replicas[i % replicas.length]!.client;
  const admit = (i: number, request: Partial<meteringV1.AdmitRequest>) => {
    const client = on(i);
    return call(client, client.admit, meteringV1.AdmitRequest.fromPartial({ keyId: "", plan: "free", ...request }));
  };
  const usage = async (key: string, plan: string) => (await call(on(0), on(0).getUsage, { keyId: key, plan })).usage!;
  const setUsed = (key: string, plan: string, used: number) => {
    const { admin } = replicas[1]!;
    return call(admin, admin.setUsage, { keyId: key, plan, rendersUsed: String(used), actor: "test" });
  };
  const count = (results: meteringV1.AdmitResponse[], decision: meteringV1.Decision) => results.filter((r) => r.decision === decision).length;

  /** Starts metering process i on the given ports and waits until it is ready. */
  async function startReplica(i: number, grpcPort: number, healthPort: number): Promise<Replica & { grpcPort: number; healthPort: number }> {
    const proc = startService(
      "metering",
      {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        LOG_LEVEL: "info",
        DATABASE_URL: database.url,
        NATS_URL: nats.url,
        GRPC_PORT: String(grpcPort),
        HEALTH_PORT: String(healthPort),
        // Not called by admission; billing has its own tests.
        IDENTITY_ADDR: "127.0.0.1:9",
        PUBLIC_BASE_URL: "http://127.0.0.1:8080",
        BILLING_PROVIDER: "local",
        ...grpcTlsEnv(certificates.metering),
      },
      path.join(workDir, `logs-${i}`),
    );
    await waitReady("metering", healthPort, proc.child).catch((err: Error) => {
      throw new Error(`${err.message}\n${proc.output.join("").slice(-3000)}`);
    });
    const client = (peer: "gateway" | "admin") => createGrpcClient(meteringV1.MeteringServiceClient, `127.0.0.1:${grpcPort}`, certificates[peer], "metering");
    return { proc, client: client("gateway"), admin: client("admin"), grpcPort, healthPort };
  }

  before(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), "pressroom-metering-"));
    database = await isolatedDatabase();
    certificates = await ensureGrpcCertificates(path.join(workDir, "grpc-tls"), ["metering", "gateway", "admin"]);
    const db = createDb({ url: database.url, schema: "metering", max: 1 });
    await migrateToLatest(db, "metering", migrations);
    await db.destroy();
    nats = await startPrivateNats(path.join(workDir, "nats"));
    await provisionNats(nats.url);
    const ports = await distinctFreePorts(4);
    for (let i = 0; i < 2; i++) replicas.push(await startReplica(i, ports[2 * i]!, ports[2 * i + 1]!));
    nc = await connect({ servers: nats.url });
  });

  after(async () => {
    await nc?.close();
    for (const replica of replicas) {
      replica.client.close();
      replica.admin.close();
      await stopChild(replica.proc.child, "SIGTERM", 10_000);
    }
    await nats?.stop();
    await database?.drop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it("two processes serve the same decisions", async () => {
    assert.equal(replicas.length, 2);
    assert.notEqual(replicas[0]!.proc.child.pid, replicas[1]!.proc.child.pid);
    const key = keyId();
    const results = [await admit(0, { keyId: key }), await admit(1, { keyId: key }), await admit(0, { keyId: key })];
    assert.deepEqual(
      results.map((r) => r.rate?.remaining),
      [9, 8, 7],
      "one window, whichever replica answers",
    );
  });

  it("quota: with R renders left and N > R parallel renders, exactly R are admitted", async () => {
    const key = keyId();
    const LEFT = 7;
    await setUsed(key, "business", 100_000 - LEFT);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => admit(i, { keyId: key, plan: "business", renderJobId: newId("job") })));
    assert.equal(count(results, Decision.DECISION_ALLOWED), LEFT);
    assert.equal(count(results, Decision.DECISION_QUOTA_EXCEEDED), 30 - LEFT);
    for (const refused of results.filter((r) => r.decision === Decision.DECISION_QUOTA_EXCEEDED)) assert.ok(refused.retryAfterSeconds >= 1);
    const after = await usage(key, "business");
    assert.deepEqual([after.rendersUsed, after.rendersRemaining, after.inFlight], ["100000", "0", LEFT]);
  });

  it("concurrency: with S slots free and N > S parallel renders, exactly S are admitted", async () => {
    const key = keyId();
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => admit(i, { keyId: key, plan: "pro", renderJobId: newId("job") })));
    assert.equal(count(results, Decision.DECISION_ALLOWED), 5);
    assert.equal(count(results, Decision.DECISION_CONCURRENCY_EXCEEDED), 35);
    for (const refused of results.filter((r) => r.decision === Decision.DECISION_CONCURRENCY_EXCEEDED)) assert.ok(refused.retryAfterSeconds >= 1);
    const after = await usage(key, "pro");
    assert.deepEqual([after.inFlight, after.rendersUsed], [5, "5"], "refusals take no quota");
  });

  it("rate window: with N > limit parallel requests, exactly the limit pass, each with its own remaining count", async () => {
    const key = keyId();
    const results = await Promise.all(Array.from({ length: 150 }, (_, i) => admit(i, { keyId: key, plan: "starter" })));
    const allowed = results.filter((r) => r.decision === Decision.DECISION_ALLOWED);
    assert.equal(allowed.length, 60);
    assert.deepEqual(
      allowed.map((r) => r.rate!.remaining).sort((a, b) => a - b),
      Array.from({ length: 60 }, (_, i) => i),
    );
    const refused = results.filter((r) => r.decision === Decision.DECISION_RATE_LIMITED);
    assert.equal(refused.length, 90);
    for (const r of refused) {
      assert.equal(r.rate!.remaining, 0);
      assert.equal(r.rate!.limit, 60);
      assert.ok(r.retryAfterSeconds >= 58 && r.retryAfterSeconds <= 60, String(r.retryAfterSeconds));
    }
    // Refusals do not count: the window still holds exactly 60.
    const after = await usage(key, "starter");
    assert.equal(after.rate!.remaining, 0);
  });

  it("the three limits are told apart under one burst: rate first, then quota, then concurrency", async () => {
    const key = keyId();
    await setUsed(key, "free", 99);
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => admit(i, { keyId: key, plan: "free", renderJobId: newId("job") })));
    // 10 requests a minute, 1 unit left, 1 slot: one render, nine refused for quota, fifteen for rate.
    assert.deepEqual(
      [count(results, Decision.DECISION_ALLOWED), count(results, Decision.DECISION_QUOTA_EXCEEDED), count(results, Decision.DECISION_RATE_LIMITED)],
      [1, 9, 15],
    );
  });

  it("a job's terminal event frees its slot once; a failure of ours refunds its unit once", async () => {
    const key = keyId();
    const [first, second] = [newId("job"), newId("job")];
    assert.equal((await admit(0, { keyId: key, plan: "starter", renderJobId: first })).decision, Decision.DECISION_ALLOWED);
    assert.equal((await admit(1, { keyId: key, plan: "starter", renderJobId: second })).decision, Decision.DECISION_ALLOWED);
    assert.equal((await admit(0, { keyId: key, plan: "starter", renderJobId: newId("job") })).decision, Decision.DECISION_CONCURRENCY_EXCEEDED);
    const js = nc.jetstream();

    await appendJobEvent(
      js,
      "render",
      jobEvent("job.succeeded", {
        jobId: first,
        keyId: key,
        source: "test",
        succeeded: { outputId: "out_x", url: "", expiresAt: "", contentType: "application/pdf", sizeBytes: "1", pages: 1, renderMs: 1 },
      }),
    );
    const failed = jobEvent("job.failed", { jobId: second, keyId: key, source: "test", failed: { code: "INTERNAL_ERROR", message: "ours", refund: true } });
    await appendJobEvent(js, "render", failed);
    // The same event delivered again under another message id (JetStream's dedupe cannot catch it): no second refund.
    await publishEvent(js, {
      subject: subjects.job(second, "render"),
      spanSubject: "test",
      msgId: newId("msg"),
      type: failed.type,
      data: jobEventsV1.JobEvent.encode(failed).finish(),
    });

    await waitFor("slots freed by the job events", async () => (await usage(key, "starter")).inFlight === 0, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = await usage(key, "starter");
    assert.deepEqual([after.inFlight, after.rendersUsed], [0, "1"], "two renders taken, one refunded, once");
    assert.equal((await admit(1, { keyId: key, plan: "starter", renderJobId: newId("job") })).decision, Decision.DECISION_ALLOWED);
  });

  it("a job finished a moment ago no longer holds its slot, even before the consumer has seen its event", async () => {
    // The sync client's next render: its previous job's terminal event is stored, the consumer may lag.
    const key = keyId();
    const js = nc.jetstream();
    let job = newId("job");
    assert.equal((await admit(0, { keyId: key, plan: "free", renderJobId: job })).decision, Decision.DECISION_ALLOWED);
    // free: 10 requests a minute, 1 render at a time.
    for (let i = 1; i <= 9; i++) {
      await appendJobEvent(
        js,
        "render",
        jobEvent("job.succeeded", {
          jobId: job,
          keyId: key,
          source: "test",
          succeeded: { outputId: "out_x", url: "", expiresAt: "", contentType: "application/pdf", sizeBytes: "1", pages: 1, renderMs: 1 },
        }),
      );
      job = newId("job");
      const next = await admit(i, { keyId: key, plan: "free", renderJobId: job });
      assert.equal(next.decision, Decision.DECISION_ALLOWED, `render ${i + 1}`);
      assert.equal(next.rate!.remaining, 9 - i, "counted once");
    }
    const after = await usage(key, "free");
    assert.deepEqual([after.inFlight, after.rendersUsed], [1, "10"]);
  });

  it("an admission whose job was never submitted is released at once (Release)", async () => {
    const key = keyId();
    const job = newId("job");
    assert.equal((await admit(0, { keyId: key, plan: "free", renderJobId: job })).decision, Decision.DECISION_ALLOWED);
    const released = await call(on(1), on(1).release, { jobId: job, refund: true });
    assert.deepEqual(released, { released: true, refunded: true });
    assert.deepEqual(await call(on(0), on(0).release, { jobId: job, refund: true }), { released: false, refunded: false }, "idempotent");
    const after = await usage(key, "free");
    assert.deepEqual([after.inFlight, after.rendersUsed], [0, "0"]);
  });

  it("usage is read from the same state: GetUsage agrees with the last Admit", async () => {
    const key = keyId();
    await admit(0, { keyId: key, plan: "pro", renderJobId: newId("job") });
    const last = await admit(1, { keyId: key, plan: "pro" });
    const now = await usage(key, "pro");
    assert.equal(now.rate!.remaining, last.rate!.remaining);
    assert.ok(Math.abs(now.rate!.resetSeconds - last.rate!.resetSeconds) <= 1);
    assert.deepEqual([now.plan, now.rendersLimit, now.rate!.limit, now.concurrencyLimit, now.inFlight, now.rendersUsed], ["pro", "10000", 300, 5, 1, "1"]);
    const month = new Date();
    assert.equal(now.periodStart, new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1)).toISOString());
  });

  it("a metering process killed in the middle of a burst cannot make the quota overshoot", async () => {
    const key = keyId();
    const LEFT = 5;
    await setUsed(key, "business", 100_000 - LEFT);
    const victim = replicas[0]!;
    const burst = Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        admit(i, { keyId: key, plan: "business", renderJobId: newId("job") }).then(
          (r) => r,
          () => undefined,
        ),
      ),
    );
    setTimeout(() => victim.proc.child.kill("SIGKILL"), 3);
    const first = (await burst).filter((r): r is meteringV1.AdmitResponse => r !== undefined);
    assert.ok(first.length < 40, "some calls died with the process");
    const survivor = replicas[1]!.client;
    const rest = await Promise.all(
      Array.from({ length: 20 }, () =>
        call(survivor, survivor.admit, meteringV1.AdmitRequest.fromPartial({ keyId: key, plan: "business", renderJobId: newId("job") })),
      ),
    );
    // A call the dead process decided may have committed without its answer arriving: never more than LEFT, and the quota ends exactly full.
    assert.ok(count(first, Decision.DECISION_ALLOWED) + count(rest, Decision.DECISION_ALLOWED) <= LEFT);
    const now = (await call(survivor, survivor.getUsage, { keyId: key, plan: "business" })).usage!;
    assert.deepEqual([now.rendersUsed, now.rendersRemaining], ["100000", "0"]);
    assert.equal(now.inFlight, LEFT, "every unit taken holds exactly one slot");

    // Back to two replicas on the same ports.
    victim.client.close();
    victim.admin.close();
    await new Promise((resolve) =>
      victim.proc.child.exitCode !== null || victim.proc.child.signalCode !== null ? resolve(undefined) : victim.proc.child.once("exit", resolve),
    );
    replicas[0] = await startReplica(0, victim.grpcPort, victim.healthPort);
  });

  it("neither replica crashed or logged an error", () => {
    for (const replica of replicas) {
      assert.equal(replica.proc.child.exitCode, null, "still running");
      const output = replica.proc.output.join("");
      assert.ok(
        !/"level":(50|60)/.test(output),
        `no error logged:\n${output
          .split("\n")
          .filter((l) => /"level":(50|60)/.test(l))
          .join("\n")
          .slice(0, 2000)}`,
      );
    }
  });
});

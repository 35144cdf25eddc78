import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { consumers, streams } from "@pressroom/platform";
import { loadJob, type JobState } from "@pressroom/domain";
import { descendantsOf, startPrivatePostgres, type PrivatePostgres, type ServiceName } from "@pressroom/stack";
import { connect, type NatsConnection } from "nats";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

/** What the load generator sent, and how it was answered (status 0: no answer, the connection broke). */
interface Sent {
  n: number;
  kind: "sync-pdf" | "sync-png" | "async";
  status: number;
  jobId?: string;
  hook?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a process is alive (a zombie waiting to be reaped is not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/**
 * The kill -9 fault suite (issue 13). A mixed load (sync PDFs, sync PNGs,
 * async renders with webhooks to a local HTTPS receiver) runs while each
 * service is killed with SIGKILL in turn and restarted, then nats-server and
 * PostgreSQL (both the suite's own) are killed and restarted. Then the books:
 * every accepted job ended, every async job called back (one event id per
 * job), nothing called back for a refused request, usage equals the charged
 * jobs exactly, every slot came back, every output URL serves its bytes, and
 * no killed service left a process behind. Prints one summary line.
 */
describe("fault suite: kill -9 every part under load, then check the books", () => {
  const receiver = new WebhookReceiver();
  const pgDir = mkdtempSync(path.join(tmpdir(), "pressroom-fault-pg-"));
  let postgres: PrivatePostgres;
  let harness: Harness;
  let nc: NatsConnection;

  before(async () => {
    await receiver.start();
    postgres = await startPrivatePostgres(pgDir);
    harness = await startHarness({
      databaseServer: postgres.url,
      serviceEnv: {
        webhook: receiver.env({ WEBHOOK_RETRY_BASE_MS: "200" }),
        gateway: { SYNC_WAIT_MS: "20000" },
        // Short leases, swept often: a render admitted by a gateway killed before it could submit it is refunded within the suite.
        metering: { SLOT_LEASE_SECONDS: "20", SWEEP_INTERVAL_MS: "2000" },
      },
    });
    nc = await connect({ servers: harness.stack.natsUrl, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  });

  after(async () => {
    await nc?.close();
    await harness?.stop();
    postgres?.stop();
    await receiver.stop();
    rmSync(pgDir, { recursive: true, force: true });
  });

  it("loses nothing, leaks nothing, bills exactly", { timeout: 290_000 }, async () => {
    const { api, stack, admin } = harness;
    const { apiKey } = await admin.createKey("business");
    const catalog = (await api.get("/v1/templates")).json as { templates: Array<{ id: string; output: string; sample_data: unknown }> };
    const card = catalog.templates.find((t) => t.output === "png")!;

    const sent: Sent[] = [];
    let loading = true;
    let next = 0;
    const load = async () => {
      while (loading) {
        const n = next++;
        const kind = (["sync-pdf", "sync-png", "async"] as const)[n % 3]!;
        const hook = kind === "async" ? `/hooks/${n}` : undefined;
        const entry: Sent = { n, kind, status: 0, hook };
        sent.push(entry);
        try {
          const response =
            kind === "sync-png"
              ? await api.post("/v1/image", { template_id: card.id, data: card.sample_data }, { key: apiKey })
              : await api.post(
                  "/v1/render",
                  { html: "<h1>Fault {{n}}</h1><p>{{kind}}</p>", data: { n, kind }, ...(hook ? { webhook_url: receiver.url(hook) } : {}) },
                  { key: apiKey },
                );
          entry.status = response.status;
          if (typeof response.json?.id === "string") entry.jobId = response.json.id;
        } catch {
          // The gateway was killed mid-request: the job may exist; the JOBS stream says.
        }
        await sleep(150);
      }
    };
    const loaders = [load(), load()];

    let kills = 0;
    const killedChildren: number[] = [];
    const killAndRestart = async (name: ServiceName) => {
      // What the service started (render's Chromium): none of it may outlive the kill.
      killedChildren.push(...descendantsOf(stack.services.processes.get(name)!.child.pid!));
      await stack.services.kill(name);
      kills++;
      await sleep(1_000);
      await stack.services.restart(name);
      await sleep(3_000);
    };
    await sleep(5_000);
    // render mid-render, storage mid-write, webhook mid-delivery, gateway during sync waits, metering holding slots.
    for (const name of ["render", "storage", "webhook", "gateway", "metering"] as const) await killAndRestart(name);
    await stack.nats.restart();
    kills++;
    await sleep(3_000);
    await postgres.restart();
    kills++;
    await sleep(5_000);
    loading = false;
    await Promise.all(loaders);

    // Every job JetStream accepted, whether or not its request got an answer.
    const accepted = await acceptedJobIds();
    const jobs = await eventually(
      "every accepted job reaches a terminal state",
      async () => {
        const jsm = await nc.jetstreamManager();
        const states = await Promise.all(accepted.map((id) => loadJob(jsm, id)));
        return states.every((job) => job && (job.status === "succeeded" || job.status === "failed")) ? (states as JobState[]) : undefined;
      },
      150_000,
      2_000,
    );
    const stuck = jobs.filter((job) => job.status !== "succeeded" && job.status !== "failed");

    const asyncJobs = jobs.filter((job) => job.webhookUrl);
    // A killed webhook service's messages come back after ack_wait (30 s).
    await eventually(
      "every async job's callback arrives",
      async () => (asyncJobs.every((job) => callbacksOf(job.id).length > 0) ? true : undefined),
      120_000,
      500,
    ).catch(() => undefined);
    if (asyncJobs.some((job) => callbacksOf(job.id).length === 0)) {
      // Where the missing callbacks stand: the webhook consumers, and any service that is not running.
      const jsm = await nc.jetstreamManager();
      const info = await jsm.consumers.info(streams.WEBHOOKS, consumers.webhookDelivery);
      console.log(
        `fault suite: ${consumers.webhookDelivery}: pending ${info.num_pending}, ack pending ${info.num_ack_pending}, redelivered ${info.num_redelivered}, pull requests waiting ${info.num_waiting}`,
      );
      const exited = [...stack.services.processes.values()].filter((p) => p.child.exitCode !== null || p.child.signalCode !== null);
      console.log(`fault suite: services not running: ${exited.map((p) => `${p.name} (${p.child.exitCode ?? p.child.signalCode})`).join(", ") || "none"}`);
      for (const p of exited) console.log(`fault suite: the end of ${p.name}'s output:\n${p.output.join("").slice(-3_000)}`);
    }
    const missingCallbacks = await Promise.all(
      asyncJobs
        .filter((job) => callbacksOf(job.id).length === 0)
        .map(async (job) => `${job.id} ${JSON.stringify((await api.get(`/v1/jobs/${job.id}`, { key: apiKey })).json?.webhook)}`),
    );
    const splitEventIds = asyncJobs.filter((job) => new Set(callbacksOf(job.id).map((c) => c.id)).size > 1);
    const acceptedSet = new Set(accepted);
    const strayCallbacks = receiver.received.filter((c) => c.rawBody && !acceptedSet.has(JSON.parse(c.rawBody).job_id as string));
    const refused = sent.filter((s) => s.status >= 400);
    const calledBackRefused = refused.filter((s) => s.hook && receiver.requestsOn(s.hook).length > 0);
    const answeredButUnknown = sent.filter((s) => (s.status === 200 || s.status === 202) && (!s.jobId || !acceptedSet.has(s.jobId)));

    const succeeded = jobs.filter((job) => job.status === "succeeded");
    const charged = succeeded.length + jobs.filter((job) => job.status === "failed" && !job.error?.refund).length;
    const usage = await eventually(
      "every slot comes back and every lost admission is refunded",
      async () => {
        const u = (await api.get("/v1/keys/usage", { key: apiKey })).json;
        return u?.concurrency?.in_flight === 0 && u?.renders?.used === charged ? u : undefined;
      },
      60_000,
      1_000,
    ).catch(async () => (await api.get("/v1/keys/usage", { key: apiKey })).json);

    const missingBytes: string[] = [];
    for (const job of succeeded) {
      const download = await api.download(job.result!.url);
      if (download.status !== 200 || download.body.byteLength !== Number(job.result!.sizeBytes)) missingBytes.push(`${job.id}: ${download.status}`);
    }
    const leftBehind = killedChildren.filter(alive);
    const lastRender = await api.post("/v1/render", { html: "<p>after the faults</p>", data: {} }, { key: apiKey });

    const lost = stuck.length + missingCallbacks.length + missingBytes.length + answeredButUnknown.length;
    const leaked = usage.concurrency.in_flight + Math.abs(usage.renders.used - charged) + leftBehind.length;
    const syncJobs = jobs.length - asyncJobs.length;
    console.log(
      `fault suite: jobs ${jobs.length} (sync ${syncJobs}, async ${asyncJobs.length}; ${succeeded.length} succeeded, ${jobs.length - succeeded.length} failed), ` +
        `requests ${sent.length} (${refused.length} refused, ${sent.filter((s) => s.status === 0).length} unanswered), kills ${kills}, lost ${lost}, leaked ${leaked}`,
    );

    assert.ok(jobs.length >= 20, `a real load: ${jobs.length} jobs`);
    assert.ok(asyncJobs.length > 0 && syncJobs > 0);
    assert.deepEqual(
      stuck.map((j) => `${j.id} ${j.status}`),
      [],
      "jobs left queued or rendering",
    );
    assert.deepEqual(missingCallbacks, [], "async jobs without a callback");
    assert.deepEqual(
      splitEventIds.map((j) => j.id),
      [],
      "retries of a callback keep its event id",
    );
    assert.deepEqual(
      strayCallbacks.map((c) => c.path),
      [],
      "callbacks for jobs that do not exist",
    );
    assert.deepEqual(
      calledBackRefused.map((s) => `${s.hook} ${s.status}`),
      [],
      "callbacks for refused requests",
    );
    assert.deepEqual(
      answeredButUnknown.map((s) => `#${s.n} ${s.status} ${s.jobId}`),
      [],
      "answered jobs that JetStream does not know",
    );
    assert.equal(usage.renders.used, charged, "usage equals the charged jobs exactly (refunds for our failures)");
    assert.equal(usage.concurrency.in_flight, 0, "every slot came back");
    assert.deepEqual(missingBytes, [], "output URLs that serve no bytes");
    assert.deepEqual(leftBehind, [], "processes left behind by killed services");
    assert.equal(lastRender.status, 200, `the render pool still works: ${lastRender.text}`);
    assert.equal(lost, 0);
    assert.equal(leaked, 0);
  });

  function callbacksOf(jobId: string): Array<{ id: string }> {
    return receiver.received.filter((c) => c.status < 300 && c.rawBody.includes(jobId)).map((c) => JSON.parse(c.rawBody) as { id: string });
  }

  /** The id of every job with a job.accepted event in JOBS. */
  async function acceptedJobIds(): Promise<string[]> {
    const jsm = await nc.jetstreamManager();
    const { state } = await jsm.streams.info(streams.JOBS);
    const ids = new Set<string>();
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const message = await jsm.streams.getMessage(streams.JOBS, { seq }).catch(() => undefined);
      if (!message) continue;
      const event = jobEventsV1.JobEvent.decode(message.data);
      if (event.type === "job.accepted") ids.add(event.jobId);
    }
    return [...ids];
  }

  endOfSuiteChecks(() => harness);
});

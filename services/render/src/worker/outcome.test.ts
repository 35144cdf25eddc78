import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { appendJobEvent, appendOutcome, decodeWebhookDelivery, jobEvent, readJobEvents } from "@pressroom/domain";
import { isWrongLastSequence, newId, streams, subjects } from "@pressroom/platform";
import { provisionNats, startPrivateNats, type PrivateNats } from "@pressroom/stack";
import { connect, type JetStreamClient, type JetStreamManager, type NatsConnection } from "nats";

/** A stored message's time (RFC 3339, to the nanosecond) in nanoseconds. */
const nanosOf = (timestamp: string) => BigInt(Date.parse(timestamp)) * 1_000_000n + BigInt((/\.\d{3}(\d*)Z$/.exec(timestamp)?.[1] ?? "").padEnd(6, "0"));

/**
 * How render appends a job's outcome (appendOutcome, at each of its four places: a render's
 * success or failure, an expiry, a destination settled): a job that calls back gets its WEBHOOKS
 * message first, and a job that does not gets none, so the webhook service reads nothing of it.
 * Real JetStream with Pressroom's topology.
 */
describe("render's outcome append schedules the job's callback, and only a callback job's", () => {
  let dir: string;
  let nats: PrivateNats;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-outcome-"));
    nats = await startPrivateNats(path.join(dir, "nats"));
    await provisionNats(nats.url);
    nc = await connect({ servers: nats.url });
    js = nc.jetstream();
    jsm = await nc.jetstreamManager();
  });

  after(async () => {
    await nc?.close();
    await nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const scheduledSeq = async () => (await jsm.streams.info(streams.WEBHOOKS)).state.last_seq;

  /** A job accepted (with a webhook_url or not) and started, as the gateway and render write them; render's last sequence. */
  async function startedJob(webhookUrl: string): Promise<{ jobId: string; lastSeq: number }> {
    const jobId = newId("job");
    const base = { jobId, keyId: "key_test" };
    await appendJobEvent(
      js,
      "gateway",
      jobEvent("job.accepted", { ...base, source: "gateway", accepted: jobEventsV1.JobAccepted.fromPartial({ webhookUrl }) }),
      0,
    );
    const started = await appendJobEvent(js, "render", jobEvent("job.started", { ...base, source: "render", started: { worker: "w", attempt: 1 } }), 0);
    return { jobId, lastSeq: started.seq };
  }

  it("publishes a callback job's WEBHOOKS message, naming the outcome, before the outcome is appended", async () => {
    const { jobId, lastSeq } = await startedJob("https://hooks.example.com/done");
    const failed = jobEvent("job.failed", {
      jobId,
      keyId: "key_test",
      source: "render",
      failed: { code: "RENDER_FAILED", message: "x", refund: false, callback: true },
    });
    await appendOutcome(js, failed, lastSeq);
    const scheduled = await jsm.streams.getMessage(streams.WEBHOOKS, { last_by_subj: subjects.webhookDelivery });
    assert.deepEqual(decodeWebhookDelivery(scheduled.data), { v: 1, event_id: failed.id, job_id: jobId, key_id: "key_test" });
    const appended = (await readJobEvents(jsm, jobId)).find((e) => e.event.id === failed.id);
    assert.ok(appended, "the outcome is appended");
    const stored = await jsm.streams.getMessage(streams.JOBS, { seq: appended.seq });
    assert.ok(nanosOf(scheduled.timestamp) < nanosOf(stored.timestamp), "scheduled first: no crash between the two can lose the callback");
  });

  it("publishes nothing for a job that calls nobody back", async () => {
    const { jobId, lastSeq } = await startedJob("");
    const before = await scheduledSeq();
    const succeeded = jobEvent("job.succeeded", { jobId, keyId: "key_test", source: "render", succeeded: { outputId: "out_x", callback: false } });
    await appendOutcome(js, succeeded, lastSeq);
    assert.deepEqual(
      (await readJobEvents(jsm, jobId)).map((e) => e.event.type),
      ["job.accepted", "job.started", "job.succeeded"],
    );
    assert.equal(await scheduledSeq(), before);
  });

  it("is refused like any append after another delivery ended the job, its scheduled message left for the webhook service to drop", async () => {
    const { jobId, lastSeq } = await startedJob("https://hooks.example.com/done");
    const outcome = (code: string) =>
      jobEvent("job.failed", { jobId, keyId: "key_test", source: "render", failed: { code, message: "x", refund: false, callback: true } });
    await appendOutcome(js, outcome("RENDER_FAILED"), lastSeq);
    const before = await scheduledSeq();
    await assert.rejects(appendOutcome(js, outcome("INTERNAL_ERROR"), lastSeq), (err) => isWrongLastSequence(err));
    assert.equal(await scheduledSeq(), before + 1);
    assert.deepEqual(
      (await readJobEvents(jsm, jobId)).map((e) => e.event.failed?.code ?? e.event.type),
      ["job.accepted", "job.started", "RENDER_FAILED"],
    );
  });
});

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { newId, publishEvent, subjects } from "@pressroom/platform";
import { appendJobEvent, appendOutcome, jobEvent, loadJob, type JobEvent } from "@pressroom/domain";
import { connect, type NatsConnection } from "nats";
import { startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

/**
 * Histories a crash can leave behind, written straight to JetStream: the
 * webhook service completes the record instead of calling the receiver again.
 */
describe("webhook delivery picks up where a crash left the record", () => {
  const receiver = new WebhookReceiver();
  let harness: Harness;
  let nc: NatsConnection;
  let keyId: string;

  before(async () => {
    await receiver.start();
    harness = await startHarness({ only: ["identity", "webhook"], serviceEnv: { webhook: receiver.env({ WEBHOOK_RETRY_BASE_MS: "200" }) } });
    nc = await connect({ servers: harness.stack.natsUrl });
    keyId = (await harness.admin.createKey("business")).keyId;
  });

  after(async () => {
    await nc?.close();
    await harness?.stop();
    await receiver.stop();
  });

  /**
   * Appends the events in order, each under the writer that writes its type; an outcome that calls
   * back as render appends it, its callback scheduled first (appendOutcome).
   */
  async function write(events: (() => JobEvent)[]): Promise<JobEvent[]> {
    const js = nc.jetstream();
    const written: JobEvent[] = [];
    for (const make of events) {
      const event = make();
      const writer = event.type === "job.accepted" ? "gateway" : event.type.startsWith("job.webhook_") ? "webhook" : "render";
      // Render writes nothing before the outcome in these histories.
      if (event.failed?.callback) await appendOutcome(js, event, 0);
      else await appendJobEvent(js, writer, event);
      written.push(event);
    }
    return written;
  }

  const base = (jobId: string) => ({ jobId, keyId, source: "test" });

  it("records the delivery of a final attempt that succeeded, without calling again", async () => {
    const jobId = newId("job");
    // The final attempt was recorded, then the process died: the WEBHOOKS message
    // that was being worked on is still there.
    const [, failed] = await write([
      () =>
        jobEvent("job.accepted", {
          ...base(jobId),
          accepted: jobEventsV1.JobAccepted.fromPartial({ webhookUrl: receiver.url("/hooks/crashed"), dataJson: "{}" }),
        }),
      () => jobEvent("job.failed", { ...base(jobId), failed: { code: "RENDER_FAILED", message: "x", refund: false } }),
      () =>
        jobEvent("job.webhook_attempted", { ...base(jobId), source: "webhook", webhookAttempted: { attempt: 1, status: 200, error: "", nextAttemptAt: "" } }),
    ]);
    await publishEvent(nc.jetstream(), {
      subject: subjects.webhookDelivery,
      spanSubject: subjects.webhookDelivery,
      msgId: failed!.id,
      type: "webhook.delivery",
      data: Buffer.from(JSON.stringify({ v: 1, event_id: failed!.id, job_id: jobId, key_id: keyId })),
    });
    const jsm = await nc.jetstreamManager();
    const job = await eventually(
      "concluded",
      async () => {
        const state = await loadJob(jsm, jobId);
        return state?.webhook.state === "delivered" ? state : undefined;
      },
      20_000,
      100,
    );
    assert.equal(job.webhook.attempts, 1);
    assert.deepEqual(job.history.map((e) => e.type).slice(-2), ["job.webhook_attempted", "job.webhook_delivered"]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(receiver.requestsOn("/hooks/crashed").length, 0);
  });

  it("does not call back a job whose retry window ended before the first attempt", async () => {
    const jobId = newId("job");
    const longAgo = new Date(Date.now() - 2 * 24 * 3_600_000).toISOString();
    await write([
      () => ({
        ...jobEvent("job.accepted", {
          ...base(jobId),
          accepted: jobEventsV1.JobAccepted.fromPartial({ webhookUrl: receiver.url("/hooks/stale"), dataJson: "{}" }),
        }),
        time: longAgo,
      }),
      () => ({ ...jobEvent("job.failed", { ...base(jobId), failed: { code: "RENDER_FAILED", message: "x", refund: false, callback: true } }), time: longAgo }),
    ]);
    const jsm = await nc.jetstreamManager();
    const job = await eventually(
      "stopped",
      async () => {
        const state = await loadJob(jsm, jobId);
        return state?.webhook.state === "exhausted" ? state : undefined;
      },
      20_000,
      100,
    );
    assert.equal(job.webhook.attempts, 0);
    assert.equal(receiver.requestsOn("/hooks/stale").length, 0);
  });

  it("delivers a job that finished recently, through the same path", async () => {
    const jobId = newId("job");
    await write([
      () =>
        jobEvent("job.accepted", {
          ...base(jobId),
          accepted: jobEventsV1.JobAccepted.fromPartial({ webhookUrl: receiver.url("/hooks/fresh"), dataJson: "{}" }),
        }),
      () => jobEvent("job.failed", { ...base(jobId), failed: { code: "RENDER_FAILED", message: "x", refund: false, callback: true } }),
    ]);
    const [callback] = await receiver.waitFor("/hooks/fresh", 1, 20_000);
    assert.equal(JSON.parse(callback!.rawBody).job_id, jobId);
  });

  it("holds a callback scheduled before its outcome was appended until the outcome is in", async () => {
    const jobId = newId("job");
    await write([
      () =>
        jobEvent("job.accepted", {
          ...base(jobId),
          accepted: jobEventsV1.JobAccepted.fromPartial({ webhookUrl: receiver.url("/hooks/late-outcome"), dataJson: "{}" }),
        }),
    ]);
    const failed = jobEvent("job.failed", { ...base(jobId), failed: { code: "RENDER_FAILED", message: "x", refund: false, callback: true } });
    await publishEvent(nc.jetstream(), {
      subject: subjects.webhookDelivery,
      spanSubject: subjects.webhookDelivery,
      msgId: `${failed.id}.callback`,
      type: "webhook.delivery",
      data: Buffer.from(JSON.stringify({ v: 1, event_id: failed.id, job_id: jobId, key_id: keyId })),
    });
    // The webhook service has looked at the message and found no outcome: the attempt that scheduled it is slow to append it.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(receiver.requestsOn("/hooks/late-outcome").length, 0);
    await appendJobEvent(nc.jetstream(), "render", failed);
    const [callback] = await receiver.waitFor("/hooks/late-outcome", 1, 20_000);
    assert.equal(JSON.parse(callback!.rawBody).id, failed.id);
  });
});

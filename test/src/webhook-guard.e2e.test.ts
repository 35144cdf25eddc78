import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { newId } from "@pressroom/platform";
import { appendJobEvent, appendOutcome, jobEvent, loadJob, readJobEvents } from "@pressroom/domain";
import { connect, type NatsConnection } from "nats";
import { startHarness, type Harness } from "./test-support/harness";
import { eventually } from "./test-support/webhook-receiver";

/**
 * The webhook service in its default configuration (no development
 * settings) never calls a non-public address. The jobs here are written
 * straight to JetStream as the gateway and render write them, so only identity
 * and webhook run.
 */
describe("webhook SSRF guard, default configuration", () => {
  let harness: Harness;
  let nc: NatsConnection;
  let keyId: string;

  before(async () => {
    harness = await startHarness({ only: ["identity", "webhook"] });
    nc = await connect({ servers: harness.stack.natsUrl });
    keyId = (await harness.admin.createKey("business")).keyId;
  });

  after(async () => {
    await nc?.close();
    await harness?.stop();
  });

  async function finishedJob(webhookUrl: string): Promise<string> {
    const js = nc.jetstream();
    const jobId = newId("job");
    await appendJobEvent(
      js,
      "gateway",
      jobEvent("job.accepted", {
        jobId,
        keyId,
        source: "test",
        accepted: jobEventsV1.JobAccepted.fromPartial({ webhookUrl, dataJson: "{}", html: "<p>x</p>" }),
      }),
      0,
    );
    // Ended as render ends a job that calls back: its callback scheduled with the outcome.
    await appendOutcome(
      js,
      jobEvent("job.failed", { jobId, keyId, source: "test", failed: { code: "RENDER_FAILED", message: "test", refund: false, callback: true } }),
      0,
    );
    return jobId;
  }

  for (const [name, url] of [
    ["a loopback IP literal", "https://127.0.0.1/hook"],
    ["a name that resolves to loopback", "https://localhost/hook"],
    ["an IPv4-mapped IPv6 loopback", "https://[::ffff:127.0.0.1]/hook"],
    ["a private address", "https://10.1.2.3/hook"],
    ["the cloud metadata address", "https://169.254.169.254/latest/meta-data"],
  ] as const) {
    it(`refuses ${name} without connecting, and stops`, async () => {
      const jobId = await finishedJob(url);
      const jsm = await nc.jetstreamManager();
      const job = await eventually(
        "delivery stopped",
        async () => {
          const state = await loadJob(jsm, jobId);
          return state?.webhook.state === "exhausted" ? state : undefined;
        },
        20_000,
        100,
      );
      assert.equal(job.webhook.attempts, 1);
      assert.equal(job.webhook.lastStatus, 0);
      assert.deepEqual(
        job.history.slice(-2).map((e) => e.type),
        ["job.webhook_attempted", "job.webhook_exhausted"],
      );
    });
  }

  it("says why in the job's history, without the URL's path", async () => {
    const jobId = await finishedJob("https://127.0.0.1/secret-path?token=abc");
    const jsm = await nc.jetstreamManager();
    await eventually("delivery stopped", async () => ((await loadJob(jsm, jobId))?.webhook.state === "exhausted" ? true : undefined), 20_000, 100);
    const events = await readJobEvents(jsm, jobId);
    const attempted = events.find((e) => e.event.type === "job.webhook_attempted")!.event.webhookAttempted!;
    assert.match(attempted.error, /loopback/);
    assert.doesNotMatch(attempted.error, /secret-path|token/);
    const exhausted = events.find((e) => e.event.type === "job.webhook_exhausted")!.event.webhookExhausted!;
    assert.match(exhausted.reason, /loopback/);
    assert.ok(!harness.stack.output().includes("secret-path"), "the URL never reaches a log line");
  });
});

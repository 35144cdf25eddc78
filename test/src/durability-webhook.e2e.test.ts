import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { verifyWebhookSignature } from "@pressroom/client";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

/**
 * Callbacks are never lost to a crash of the webhook service: the schedule
 * lives in JetStream (the WEBHOOKS message, nak'd with the delay until the
 * next attempt) and in the job's events (next_attempt_at), not in the
 * process. These tests kill it with SIGKILL.
 */
describe("never lost: kill -9 the webhook service", () => {
  const receiver = new WebhookReceiver();
  let harness: Harness;
  let apiKey: string;
  let secret: string;

  before(async () => {
    await receiver.start();
    harness = await startHarness({ serviceEnv: { webhook: receiver.env({ WEBHOOK_RETRY_BASE_MS: "200", WEBHOOK_RETRY_CAP_MS: "1000" }) } });
    apiKey = (await harness.admin.createKey("business")).apiKey;
    secret = (await harness.api.get("/v1/keys/webhook-secret", { key: apiKey })).json.secret as string;
  });

  after(async () => {
    await harness?.stop();
    await receiver.stop();
  });

  async function submit(webhookPath: string): Promise<string> {
    const response = await harness.api.post(
      "/v1/render",
      { html: "<p>{{n}}</p>", data: { n: webhookPath }, webhook_url: receiver.url(webhookPath) },
      { key: apiKey },
    );
    assert.equal(response.status, 202, response.text);
    return response.json.id as string;
  }

  async function jobView(jobId: string) {
    return (await harness.api.get(`/v1/jobs/${jobId}`, { key: apiKey })).json;
  }

  function eventTypes(view: { events: { type: string }[] }): string[] {
    return view.events.map((e) => e.type);
  }

  it("resumes a delivery after a restart, on schedule, once per attempt", async () => {
    // The first attempt is told to come back in 5 s; the service dies in the wait.
    receiver.on("/hooks/wait", (n) => (n === 0 ? { status: 503, headers: { "retry-after": "5" } } : { status: 200 }));
    const jobId = await submit("/hooks/wait");
    await receiver.waitFor("/hooks/wait", 1, 60_000);
    const scheduled = await eventually(
      "attempt 1 recorded with its next attempt",
      async () => {
        const view = await jobView(jobId);
        return view.webhook?.attempts === 1 && view.webhook.next_attempt_at ? view : undefined;
      },
      10_000,
      50,
    );
    const due = Date.parse(scheduled.webhook.next_attempt_at);
    assert.ok(due - Date.now() > 3_000, "the retry is still seconds away");

    await harness.stack.services.kill("webhook");
    await new Promise((resolve) => setTimeout(resolve, 500));
    await harness.stack.services.restart("webhook");

    const callbacks = await receiver.waitFor("/hooks/wait", 2, 30_000);
    const second = callbacks[1]!;
    assert.ok(second.at >= due - 300, `attempt 2 came ${due - second.at} ms before it was due`);
    assert.ok(second.at <= due + 3_000, `attempt 2 came ${second.at - due} ms after it was due`);
    assert.equal(verifyWebhookSignature(second.rawBody, second.headers["x-service-signature"], secret), true);
    assert.equal(JSON.parse(second.rawBody).id, JSON.parse(callbacks[0]!.rawBody).id);

    const view = await eventually(
      "delivered",
      async () => {
        const v = await jobView(jobId);
        return v.webhook?.state === "delivered" ? v : undefined;
      },
      10_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.equal(receiver.requestsOn("/hooks/wait").length, 2, "one request per attempt");
    assert.deepEqual(
      eventTypes(view).filter((t) => t.startsWith("job.webhook")),
      ["job.webhook_attempted", "job.webhook_attempted", "job.webhook_delivered"],
    );
  });

  it("delivers an attempt that fell due while the service was down, as soon as it is back", async () => {
    receiver.on("/hooks/overdue", (n) => (n === 0 ? { status: 503, headers: { "retry-after": "2" } } : { status: 200 }));
    const jobId = await submit("/hooks/overdue");
    await receiver.waitFor("/hooks/overdue", 1, 60_000);
    await eventually("attempt 1 recorded", async () => ((await jobView(jobId)).webhook?.attempts === 1 ? true : undefined), 10_000, 50);
    await harness.stack.services.kill("webhook");
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    assert.equal(receiver.requestsOn("/hooks/overdue").length, 1, "nothing is sent while the service is down");
    const restarted = Date.now();
    await harness.stack.services.restart("webhook");
    const callbacks = await receiver.waitFor("/hooks/overdue", 2, 30_000);
    assert.ok(callbacks[1]!.at - restarted < 10_000);
    await eventually("delivered", async () => ((await jobView(jobId)).webhook?.state === "delivered" ? true : undefined), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(receiver.requestsOn("/hooks/overdue").length, 2);
  });

  it("delivers the callback of a job that finished while the service was down", async () => {
    await harness.stack.services.kill("webhook");
    const jobId = await submit("/hooks/later");
    await eventually("the job succeeds", async () => ((await jobView(jobId)).status === "succeeded" ? true : undefined), 60_000, 100);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(receiver.requestsOn("/hooks/later").length, 0);
    await harness.stack.services.restart("webhook");
    const [callback] = await receiver.waitFor("/hooks/later", 1, 30_000);
    assert.equal(JSON.parse(callback!.rawBody).job_id, jobId);
    await eventually("delivered", async () => ((await jobView(jobId)).webhook?.state === "delivered" ? true : undefined), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(receiver.requestsOn("/hooks/later").length, 1);
  });

  endOfSuiteChecks(() => harness);
});

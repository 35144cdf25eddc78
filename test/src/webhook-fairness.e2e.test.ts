import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver } from "./test-support/webhook-receiver";

/**
 * One customer's slow endpoint must not delay another customer's callbacks.
 * The webhook service runs 4 deliveries at once with at most 2 per API key;
 * key A's endpoint holds every request open until the test lets it answer,
 * and key B's callback must arrive meanwhile.
 */

const PER_KEY = 2;

describe("webhook delivery: a slow endpoint delays only its own key", () => {
  const receiver = new WebhookReceiver();
  let h: Harness;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));

  before(async () => {
    await receiver.start();
    h = await startHarness({
      serviceEnv: { webhook: receiver.env({ WEBHOOK_CONCURRENCY: "4", WEBHOOK_PER_KEY_CONCURRENCY: String(PER_KEY), WEBHOOK_TIMEOUT_MS: "120000" }) },
    });
  });

  after(async () => {
    release();
    await h?.stop();
    await receiver.stop();
  });

  async function submit(apiKey: string, webhookPath: string, n: number): Promise<string> {
    const response = await h.api.post("/v1/render", { html: "<p>{{n}}</p>", data: { n }, webhook_url: receiver.url(webhookPath) }, { key: apiKey });
    assert.equal(response.status, 202, response.text);
    return response.json.id as string;
  }

  it("key B's callback arrives while key A's endpoint holds its share of deliveries open, and A gets no more than its share", async () => {
    const [a, b] = await Promise.all([h.admin.createKey("business"), h.admin.createKey("business")]);
    receiver.on("/slow", () => ({ status: 200, until: held }));
    for (let n = 0; n < 6; n++) await submit(a.apiKey, "/slow", n);
    await receiver.waitFor("/slow", PER_KEY, 60_000);

    const jobB = await submit(b.apiKey, "/fast", 0);
    const [fast] = await receiver.waitFor("/fast", 1, 60_000);
    assert.equal(JSON.parse(fast!.rawBody).job_id, jobB);
    assert.equal(receiver.requestsOn("/slow").length, PER_KEY, "A's other callbacks waited for A's own deliveries");

    release();
    const slow = await receiver.waitFor("/slow", 6, 60_000);
    assert.equal(new Set(slow.map((r) => JSON.parse(r.rawBody).job_id)).size, 6, "every one of A's callbacks was delivered once");
  });

  endOfSuiteChecks(() => h);
});

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { streams, subjects } from "@pressroom/platform";
import { connect, type NatsConnection } from "nats";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

interface JobView {
  id: string;
  status: string;
  error?: { code: string; message: string };
  events: { type: string }[];
}

/** Occupies the only render slot for about 4 s. */
const SLOW_HTML = "<p>slow</p><script>const end = Date.now() + 4000; while (Date.now() < end) {}</script>";

/**
 * A render command NATS drops (here: aged out of the RENDER queue, whose max
 * age is the queue's maximum wait) leaves a job nothing would ever end. Once
 * it is overdue (acceptance + RENDER_MAX_QUEUE_WAIT_MS + RENDER_DEADLINE_MS +
 * the settle margin), metering's sweep asks render, the only writer allowed,
 * to end it: failed INTERNAL_ERROR, its slot freed, its unit refunded, its
 * webhook sent. The whole product runs under its NATS users, so the request's
 * permissions are held too.
 */
describe("hostile queue: a job whose render command is gone ends failed, freed, refunded and called back", () => {
  const receiver = new WebhookReceiver();
  let h: Harness;
  let nc: NatsConnection;

  before(async () => {
    await receiver.start();
    h = await startHarness({
      natsUsers: true,
      env: { RENDER_MAX_QUEUE_WAIT_MS: "2000", RENDER_DEADLINE_MS: "6000", RENDER_SLOTS: "1" },
      serviceEnv: { metering: { SLOT_LEASE_SECONDS: "20", SWEEP_INTERVAL_MS: "1000" }, webhook: receiver.env({ WEBHOOK_RETRY_BASE_MS: "200" }) },
    });
    nc = await connect({ servers: h.stack.natsUrl, user: "provision", pass: h.stack.natsPasswords!.provision });
  });
  after(async () => {
    await nc?.close();
    await h?.stop();
    await receiver.stop();
  });

  const view = async (id: string, key: string) => (await h.api.get(`/v1/jobs/${id}`, { key })).json as JobView;
  const rendersUsed = async (key: string) => (await h.api.get("/v1/keys/usage", { key })).json.renders.used as number;

  it("ends an aged-out job within the queue's wait plus the deadline", { timeout: 180_000 }, async () => {
    const busy = await h.admin.createKey("business");
    const owner = await h.admin.createKey("free"); // one render at a time
    const slow = await h.api.post("/v1/render", { html: SLOW_HTML, data: {}, webhook_url: receiver.url("/hooks/slow") }, { key: busy.apiKey });
    assert.equal(slow.status, 202, slow.text);
    await eventually(
      "the slow job holds the only render slot",
      async () => ((await view(slow.json.id, busy.apiKey)).status === "rendering" ? true : undefined),
      60_000,
      50,
    );
    // Render checks the job itself: asked (as metering may) to end one that is not overdue, it does nothing.
    const metering = await connect({ servers: h.stack.natsUrl, user: "metering", pass: h.stack.natsPasswords!.metering });
    metering.publish(subjects.jobExpiryRequested, slow.json.id);
    await metering.drain();

    const accepted = await h.api.post(
      "/v1/render",
      { html: "<p>never rendered</p>", data: {}, webhook_url: receiver.url("/hooks/lost") },
      { key: owner.apiKey },
    );
    assert.equal(accepted.status, 202, accepted.text);
    const id = accepted.json.id as string;

    // NATS drops the waiting command at the queue's maximum wait; the job is still queued and holds the key's slot.
    const jsm = await nc.jetstreamManager();
    await eventually(
      "the command aged out of RENDER",
      async () => ((await jsm.streams.info(streams.RENDER)).state.messages === 0 ? true : undefined),
      30_000,
      100,
    );
    assert.equal((await view(id, owner.apiKey)).status, "queued");
    const refused = await h.api.post("/v1/render", { html: "<p>second</p>", data: {} }, { key: owner.apiKey });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.json.code, "CONCURRENCY_EXCEEDED");

    // The owner's plan allows 10 requests a minute, polls included: the callback says when the job ended.
    const [callback] = await receiver.waitFor("/hooks/lost", 1, 120_000);
    const failed = await view(id, owner.apiKey);
    assert.equal(failed.status, "failed");
    assert.equal(failed.error?.code, "INTERNAL_ERROR");
    assert.match(failed.error!.message, /maximum wait \(2 s\).*refunded/);
    assert.deepEqual(
      failed.events.map((event) => event.type).filter((type) => type.startsWith("job.") && !type.startsWith("job.webhook")),
      ["job.accepted", "job.failed"],
    );

    const body = JSON.parse(callback!.rawBody) as { type: string; job_id: string; status: string; error: { code: string } };
    assert.equal(body.type, "job.failed");
    assert.equal(body.job_id, id);
    assert.equal(body.status, "failed");
    assert.equal(body.error.code, "INTERNAL_ERROR");

    assert.equal(await eventually("the unit is refunded", async () => ((await rendersUsed(owner.apiKey)) === 0 ? true : undefined), 30_000, 1_000), true);
    const next = await h.api.post("/v1/render", { html: "<p>after the lost job</p>", data: {} }, { key: owner.apiKey });
    assert.equal(next.status, 200, `the slot is free: ${next.text}`);
    assert.equal(await rendersUsed(owner.apiKey), 1);
    assert.equal((await view(slow.json.id, busy.apiKey)).status, "succeeded", "a render that outlived its command's queue time still ends");
  });

  endOfSuiteChecks(() => h);
});

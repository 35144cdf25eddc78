import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { connect, type NatsConnection } from "nats";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

/** A document whose render takes about 3 s: a script that busy-waits. */
const SLOW_HTML = "<h1>Slow {{n}}</h1><script>const end = Date.now() + 3000; while (Date.now() < end) {}</script>";

/**
 * A render worker killed with SIGKILL in the middle of a render loses
 * nothing: the RENDER work-queue message was not acked, JetStream redelivers
 * it after ack_wait (45 s) to the restarted worker, and the optimistic
 * appends let the job succeed exactly once.
 */
describe("never lost: kill -9 a render worker mid-render", () => {
  const receiver = new WebhookReceiver();
  let harness: Harness;
  let nc: NatsConnection;

  before(async () => {
    await receiver.start();
    harness = await startHarness({
      serviceEnv: {
        webhook: receiver.env({ WEBHOOK_RETRY_BASE_MS: "200" }),
        render: { RENDER_DEADLINE_MS: "60000" },
        gateway: { TEMPLATE_REFRESH_MS: "200" },
      },
    });
    nc = await connect({ servers: harness.stack.natsUrl });
  });

  after(async () => {
    await nc?.close();
    await harness?.stop();
    await receiver.stop();
  });

  it("redelivers the job, which succeeds exactly once, counts one quota unit and calls back once", { timeout: 180_000 }, async () => {
    const { apiKey } = await harness.admin.createKey("business");
    const accepted = await harness.api.post("/v1/render", { html: SLOW_HTML, data: { n: 1 }, webhook_url: receiver.url("/hooks/slow") }, { key: apiKey });
    assert.equal(accepted.status, 202, accepted.text);
    const jobId = accepted.json.id as string;

    await eventually(
      "the render starts",
      async () => {
        const view = (await harness.api.get(`/v1/jobs/${jobId}`, { key: apiKey })).json;
        return view.status === "rendering" ? view : undefined;
      },
      60_000,
      50,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    await harness.stack.services.kill("render");
    const killedAt = Date.now();
    await harness.stack.services.restart("render");

    const view = await eventually(
      "the job succeeds after redelivery",
      async () => {
        const v = (await harness.api.get(`/v1/jobs/${jobId}`, { key: apiKey })).json;
        return v.status === "succeeded" ? v : undefined;
      },
      120_000,
      250,
    );
    assert.ok(Date.now() - killedAt > 1_000);
    const download = await harness.api.download(view.url);
    assert.equal(download.status, 200);

    // Let anything late (a second outcome, a second callback) show up before counting.
    const [callback] = await receiver.waitFor("/hooks/slow", 1, 30_000);
    await eventually(
      "callback recorded",
      async () => {
        const v = (await harness.api.get(`/v1/jobs/${jobId}`, { key: apiKey })).json;
        return v.webhook?.state === "delivered" ? v : undefined;
      },
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    const types = await jobEventTypes(jobId);
    assert.equal(types.filter((t) => t === "job.succeeded").length, 1, `one succeeded event: ${types.join(", ")}`);
    assert.equal(types.filter((t) => t === "job.failed").length, 0);
    assert.equal(types.filter((t) => t === "job.started").length, 2, "started twice: the killed attempt and the redelivery");
    const finalView = (await harness.api.get(`/v1/jobs/${jobId}`, { key: apiKey })).json;
    assert.equal(finalView.events.filter((e: { type: string }) => e.type === "job.succeeded").length, 1);

    const usage = await harness.api.get("/v1/keys/usage", { key: apiKey });
    assert.equal(usage.status, 200);
    assert.equal(usage.json.renders.used, 1, "one quota unit");
    assert.equal(usage.json.concurrency.in_flight, 0, "the slot was freed");

    assert.equal(receiver.requestsOn("/hooks/slow").length, 1, "one callback");
    assert.equal(JSON.parse(callback!.rawBody).status, "succeeded");
  });

  it("accepts jobs for a known template while the render service is down, and renders them once it is back", { timeout: 120_000 }, async () => {
    const { apiKey } = await harness.admin.createKey("business");
    const catalog = (await harness.api.get("/v1/templates")).json as { templates: Array<{ id: string; sample_data: unknown }> };
    const letter = catalog.templates.find((t) => t.id === "letter")!;
    const warm = await harness.api.post("/v1/render", { template_id: "letter", data: letter.sample_data }, { key: apiKey });
    assert.equal(warm.status, 200, warm.text);

    await harness.stack.services.kill("render");
    // Past the gateway's refresh interval (200 ms here): the next lookups go to a catalog that is down.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const jobIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const accepted = await harness.api.post(
        "/v1/render",
        { template_id: "letter", data: letter.sample_data, webhook_url: receiver.url("/hooks/down") },
        { key: apiKey },
      );
      assert.equal(accepted.status, 202, accepted.text);
      jobIds.push(accepted.json.id as string);
    }
    const unknown = await harness.api.post(
      "/v1/render",
      { template_id: "not-yet-looked-up", data: {}, webhook_url: receiver.url("/hooks/down") },
      { key: apiKey },
    );
    assert.equal(unknown.status, 500, "a template never looked up cannot be checked while the catalog is down");
    assert.equal(unknown.json.code, "INTERNAL_ERROR");

    await harness.stack.services.restart("render");
    for (const jobId of jobIds) {
      const view = await eventually(
        `job ${jobId} succeeds`,
        async () => {
          const v = (await harness.api.get(`/v1/jobs/${jobId}`, { key: apiKey })).json;
          return v.status === "succeeded" ? v : undefined;
        },
        60_000,
        100,
      );
      const download = await harness.api.download(view.url);
      assert.equal(download.status, 200);
    }
  });

  /** Every event on the job's subject, read straight from JetStream. */
  async function jobEventTypes(jobId: string): Promise<string[]> {
    const jsm = await nc.jetstreamManager();
    const { state } = await jsm.streams.info("JOBS");
    const types: string[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const message = await jsm.streams.getMessage("JOBS", { seq });
      const event = jobEventsV1.JobEvent.decode(message.data);
      if (event.jobId === jobId) types.push(event.type);
    }
    return types;
  }

  endOfSuiteChecks(() => harness);
});

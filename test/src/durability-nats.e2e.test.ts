import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { connect } from "nats";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

const JOBS = 8;

/**
 * A 202 means the job is in JetStream's file store: restarting nats-server
 * (SIGKILL, then the same store) while jobs wait in the RENDER queue loses
 * none of them, and every callback still arrives.
 */
describe("never lost: restart nats-server while jobs are queued", () => {
  const receiver = new WebhookReceiver();
  let harness: Harness;

  before(async () => {
    await receiver.start();
    harness = await startHarness({ serviceEnv: { webhook: receiver.env({ WEBHOOK_RETRY_BASE_MS: "200", WEBHOOK_RETRY_CAP_MS: "2000" }) } });
  });

  after(async () => {
    await harness?.stop();
    await receiver.stop();
  });

  it("completes every accepted job and delivers every callback", { timeout: 240_000 }, async () => {
    const { apiKey } = await harness.admin.createKey("business");
    // Two render slots and ~2 s documents: most of these wait in the queue when the server dies.
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const response = await harness.api.post(
        "/v1/render",
        {
          html: "<p>{{i}}</p><script>const end = Date.now() + 2000; while (Date.now() < end) {}</script>",
          data: { i },
          webhook_url: receiver.url(`/hooks/nats-${i}`),
        },
        { key: apiKey },
      );
      assert.equal(response.status, 202, response.text);
      ids.push(response.json.id as string);
    }
    const before = await Promise.all(ids.map(async (id) => (await harness.api.get(`/v1/jobs/${id}`, { key: apiKey })).json.status as string));
    assert.ok(before.filter((status) => status === "queued").length >= JOBS / 2, `jobs still queued at the restart: ${before.join(", ")}`);
    await harness.stack.nats.restart();

    const views = await eventually(
      "every job finishes",
      async () => {
        const all = await Promise.all(ids.map(async (id) => (await harness.api.get(`/v1/jobs/${id}`, { key: apiKey })).json));
        return all.every((v) => v.status === "succeeded" || v.status === "failed") ? all : undefined;
      },
      180_000,
      500,
    );
    assert.deepEqual(
      views.map((v) => v.status),
      ids.map(() => "succeeded"),
    );

    for (let i = 0; i < JOBS; i++) {
      const [callback] = await receiver.waitFor(`/hooks/nats-${i}`, 1, 60_000);
      const body = JSON.parse(callback!.rawBody);
      assert.equal(body.job_id, ids[i]);
      assert.equal(body.status, "succeeded");
    }
    await eventually(
      "every callback recorded",
      async () => {
        const all = await Promise.all(ids.map(async (id) => (await harness.api.get(`/v1/jobs/${id}`, { key: apiKey })).json));
        return all.every((v) => v.webhook?.state === "delivered") ? all : undefined;
      },
      60_000,
      500,
    );

    // Exactly one outcome per job in the stream.
    const nc = await connect({ servers: harness.stack.natsUrl });
    try {
      const jsm = await nc.jetstreamManager();
      const { state } = await jsm.streams.info("JOBS");
      const outcomes = new Map<string, number>();
      for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
        const event = jobEventsV1.JobEvent.decode((await jsm.streams.getMessage("JOBS", { seq })).data);
        if (event.type === "job.succeeded" || event.type === "job.failed") outcomes.set(event.jobId, (outcomes.get(event.jobId) ?? 0) + 1);
      }
      for (const id of ids) assert.equal(outcomes.get(id), 1, `${id} has one outcome`);
    } finally {
      await nc.close();
    }
    const usage = await harness.api.get("/v1/keys/usage", { key: apiKey });
    assert.equal(usage.json.renders.used, JOBS);

    // The system keeps working after the restart.
    const sync = await harness.api.post("/v1/render", { html: "<p>after</p>", data: {} }, { key: apiKey });
    assert.equal(sync.status, 200, sync.text);
  });

  endOfSuiteChecks(() => harness);
});

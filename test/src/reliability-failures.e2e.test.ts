import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { consumers, newId, publishEvent, streams, subjects } from "@pressroom/platform";
import { DEMO_API_KEY, jobEvent, loadJob } from "@pressroom/domain";
import { connect, type NatsConnection } from "nats";
import { errorShape } from "./test-support/api";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

/** The template bomb of issue 13: 3,000³ iterations of Handlebars. */
const BOMB = { html: "<p>{{#each a}}{{#each @root.a}}{{#each @root.a}}{{/each}}{{/each}}{{/each}}</p>", data: { a: new Array(3_000).fill(0) } };

/**
 * Failure paths of issue 13 on a real stack: a template bomb stalls nothing,
 * a job whose every delivery died still ends (failed, refunded, called back),
 * and a job that cannot be submitted gives its slot and unit back.
 */
describe("nothing hung, nothing lost, nothing billed wrongly", () => {
  const receiver = new WebhookReceiver();
  let harness: Harness;
  let nc: NatsConnection;

  before(async () => {
    await receiver.start();
    harness = await startHarness({
      serviceEnv: {
        webhook: receiver.env({ WEBHOOK_RETRY_BASE_MS: "200" }),
        render: { RENDER_DEADLINE_MS: "8000" },
        // Short leases, swept every second: a queued job must keep its slot past its lease.
        metering: { SLOT_LEASE_SECONDS: "10", SWEEP_INTERVAL_MS: "1000" },
      },
    });
    nc = await connect({ servers: harness.stack.natsUrl, maxReconnectAttempts: -1 });
  });

  after(async () => {
    await nc?.close();
    await harness?.stop();
    await receiver.stop();
  });

  it("fails a template bomb 422 RENDER_FAILED naming the deadline, while another key's render flows", { timeout: 120_000 }, async () => {
    const { apiKey } = await harness.admin.createKey("business");
    const bomb = harness.api.post("/v1/render", BOMB, { key: DEMO_API_KEY });
    const normal = await harness.api.post("/v1/render", { html: "<h1>Hello {{name}}</h1>", data: { name: "Ada" } }, { key: apiKey });
    assert.equal(normal.status, 200, normal.text);
    const failed = await bomb;
    assert.equal(failed.status, 422, failed.text);
    assert.equal(errorShape(failed).code, "RENDER_FAILED");
    assert.match(failed.json.error, /template expansion exceeded the 8 s render deadline/);
    const after = await harness.api.post("/v1/render", { html: "<p>{{n}}</p>", data: { n: 2 } }, { key: apiKey });
    assert.equal(after.status, 200, "the render service still renders after the bomb");
  });

  it("fails a job whose every delivery died with INTERNAL_ERROR: callback sent, unit refunded, slot freed", { timeout: 180_000 }, async () => {
    const { apiKey } = await harness.admin.createKey("business");
    await harness.stack.services.kill("render");
    const accepted = await harness.api.post("/v1/render", { html: "<p>{{n}}</p>", data: { n: 1 }, webhook_url: receiver.url("/hooks/died") }, { key: apiKey });
    assert.equal(accepted.status, 202, accepted.text);
    const jobId = accepted.json.id as string;

    // Three workers take the command and die. A killed worker's delivery comes back after
    // ack_wait (45 s); a nak without delay is the same delivery spent, at once.
    const consumer = await nc.jetstream().consumers.get(streams.RENDER, consumers.renderWorkers);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const msg = await consumer.next({ expires: 30_000 });
      assert.ok(msg, `delivery ${attempt}`);
      assert.equal(msg.info.redeliveryCount, attempt);
      msg.nak();
    }
    await harness.stack.services.restart("render");

    const view = await eventually(
      "the job fails",
      async () => {
        const v = (await harness.api.get(`/v1/jobs/${jobId}`, { key: apiKey })).json;
        return v.status === "failed" ? v : undefined;
      },
      60_000,
      200,
    );
    assert.equal(view.error.code, "INTERNAL_ERROR");
    const [callback] = await receiver.waitFor("/hooks/died", 1, 30_000);
    assert.equal(JSON.parse(callback!.rawBody).status, "failed");
    const usage = await eventually(
      "the slot and the unit come back",
      async () => {
        const u = (await harness.api.get("/v1/keys/usage", { key: apiKey })).json;
        return u.concurrency.in_flight === 0 && u.renders.used === 0 ? u : undefined;
      },
      30_000,
      200,
    );
    assert.equal(usage.renders.used, 0);
  });

  it("gives back the slot and the unit of a job that could not be submitted (NATS down), so the key is not locked out", { timeout: 180_000 }, async () => {
    const { apiKey } = await harness.admin.createKey("business");
    await harness.stack.nats.stop();
    const refused = await harness.api.post("/v1/render", { html: "<p>{{n}}</p>", data: { n: 1 }, webhook_url: receiver.url("/hooks/outage") }, { key: apiKey });
    await harness.stack.nats.restart();
    assert.equal(refused.status, 500, refused.text);
    assert.equal(errorShape(refused).code, "INTERNAL_ERROR");

    const usage = (await harness.api.get("/v1/keys/usage", { key: apiKey })).json;
    assert.equal(usage.concurrency.in_flight, 0, "the slot was released");
    assert.equal(usage.renders.used, 0, "the unit was refunded");
    const next = await eventually(
      "the key renders again once NATS is back",
      async () => {
        const r = await harness.api.post("/v1/render", { html: "<p>{{n}}</p>", data: { n: 2 } }, { key: apiKey });
        return r.status === 500 ? undefined : r;
      },
      60_000,
      500,
    );
    assert.equal(next.status, 200, next.text);
    assert.equal(receiver.requestsOn("/hooks/outage").length, 0, "no callback for a refused request");
  });

  it("drops a render command stored after the gateway gave up on it (a publish buffered through a NATS outage)", { timeout: 120_000 }, async () => {
    const jobId = newId("job");
    const accepted = jobEvent("job.accepted", {
      jobId,
      keyId: "key_gave_up",
      source: "gateway",
      accepted: {
        kind: jobEventsV1.JobKind.JOB_KIND_RENDER,
        templateId: "",
        templateVersion: 0,
        html: "<p>late</p>",
        dataJson: "{}",
        webhookUrl: receiver.url("/hooks/late"),
        plan: "business",
        htmlSha256: "",
        htmlBytes: 0,
        dataSha256: "",
        dataBytes: 0,
        url: "",
        documents: [],
        options: undefined,
        templateOwner: "",
        templateGeneration: 0,
      },
    });
    // Accepted two minutes ago, stored only now: the gateway answered 500 and refunded it long since.
    accepted.time = new Date(Date.now() - 120_000).toISOString();
    // A connection of its own: the suite's may still be reconnecting after the outage above.
    const own = await connect({ servers: harness.stack.natsUrl });
    after(() => own.close());
    await publishEvent(own.jetstream(), {
      subject: subjects.renderRequested,
      spanSubject: subjects.renderRequested,
      msgId: jobId,
      type: "render.requested",
      data: jobEventsV1.RenderCommand.encode(jobEventsV1.RenderCommand.fromPartial({ jobId, keyId: "key_gave_up", accepted })).finish(),
    });
    const jsm = await own.jetstreamManager();
    await eventually(
      "the worker takes the command",
      async () => ((await jsm.streams.info(streams.RENDER)).state.messages === 0 ? true : undefined),
      60_000,
      200,
    );
    assert.equal(await loadJob(jsm, jobId), undefined, "no job was created from it");
    assert.equal(receiver.requestsOn("/hooks/late").length, 0);
  });

  it("keeps the slot of a job queued longer than the slot's lease", { timeout: 120_000 }, async () => {
    // Identity records a new key's account event in NATS: its connection may still be coming back from the outages above.
    const { apiKey } = await eventually("identity creates keys again", () => harness.admin.createKey("business").catch(() => undefined), 30_000, 500);
    await harness.stack.services.kill("render");
    const accepted = await harness.api.post(
      "/v1/render",
      { html: "<p>{{n}}</p>", data: { n: 1 }, webhook_url: receiver.url("/hooks/backlog") },
      { key: apiKey },
    );
    assert.equal(accepted.status, 202, accepted.text);
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    const usage = (await harness.api.get("/v1/keys/usage", { key: apiKey })).json;
    assert.equal(usage.concurrency.in_flight, 1, "the queued job still holds its slot after 15 s (lease 10 s)");

    await harness.stack.services.restart("render");
    await receiver.waitFor("/hooks/backlog", 1, 60_000);
    await eventually(
      "the slot comes back with the job's end",
      async () => {
        const u = (await harness.api.get("/v1/keys/usage", { key: apiKey })).json;
        return u.concurrency.in_flight === 0 ? u : undefined;
      },
      30_000,
      500,
    );
  });

  endOfSuiteChecks(() => harness);
});

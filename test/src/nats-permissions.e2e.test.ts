import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  commitObject,
  consumers,
  JOB_WRITERS,
  objectChunkSubject,
  objectStoreStream,
  streams,
  subjects,
  writeObjectChunks,
  type NatsComponent,
} from "@pressroom/platform";
import { AckPolicy, connect, type NatsConnection } from "nats";
import { startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver } from "./test-support/webhook-receiver";

/**
 * Every component connects to NATS as its own user, allowed only what
 * natsPermissions() lists (the chart's NATS users are built from the same
 * list): the whole product works so, and what a component does not need is
 * refused by the server.
 */
describe("NATS users with per-component permissions", () => {
  const receiver = new WebhookReceiver();
  let harness: Harness;
  let apiKey: string;
  const connections: NatsConnection[] = [];

  const as = async (component: NatsComponent): Promise<NatsConnection> => {
    const nc = await connect({ servers: harness.stack.natsUrl, user: component, pass: harness.stack.natsPasswords![component] });
    connections.push(nc);
    return nc;
  };
  /** Messages stored on a subject, read as the provisioning step (which may read every stream). */
  const stored = async (stream: string, subject: string): Promise<number> => {
    const jsm = await (await as("provision")).jetstreamManager();
    const info = await jsm.streams.info(stream, { subjects_filter: subject });
    return Object.values(info.state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
  };

  before(async () => {
    await receiver.start();
    harness = await startHarness({ natsUsers: true, serviceEnv: { webhook: receiver.env() } });
    apiKey = (await harness.admin.createKey("business")).apiKey;
  });

  after(async () => {
    for (const nc of connections) await nc.close();
    await harness?.stop();
    await receiver.stop();
  });

  it("anonymous connections are refused", async () => {
    await assert.rejects(connect({ servers: harness.stack.natsUrl, maxReconnectAttempts: 0 }), /authorization/i);
  });

  it("a sync render, an image and an async render with a webhook work end to end", async () => {
    const pdf = await harness.api.post("/v1/render", { html: "<h1>Hello {{name}}</h1>", data: { name: "Ada" } }, { key: apiKey });
    assert.equal(pdf.status, 200, pdf.text);
    const download = await fetch(pdf.json.url as string);
    assert.equal(download.status, 200);
    assert.equal((await download.arrayBuffer()).byteLength, pdf.json.size_bytes);

    const png = await harness.api.post("/v1/image", { template_id: "og-image", data: { headline: "Permissions", site_name: "Pressroom" } }, { key: apiKey });
    assert.equal(png.status, 200, png.text);
    assert.equal(png.json.content_type, "image/png");

    const accepted = await harness.api.post("/v1/render", { html: "<p>later</p>", data: {}, webhook_url: receiver.url("/hooks/nats-users") }, { key: apiKey });
    assert.equal(accepted.status, 202, accepted.text);
    const [callback] = await receiver.waitFor("/hooks/nats-users", 1, 60_000);
    const body = JSON.parse(callback!.rawBody) as { job_id: string; type: string };
    assert.equal(body.job_id, accepted.json.id);
    assert.equal(body.type, "job.succeeded");
  });

  it("a batch's items, dispatched to the render queue by metering, all run", async () => {
    const created = await harness.api.post(
      "/v1/batches",
      {
        items: [
          { html: "<p>{{n}}</p>", data: { n: 1 } },
          { html: "<p>{{n}}</p>", data: { n: 2 } },
        ],
      },
      { key: apiKey },
    );
    assert.equal(created.status, 202, created.text);
    const id = created.json.id as string;
    let counts: Record<string, number> = {};
    for (let i = 0; i < 120 && counts.succeeded !== 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      counts = (await harness.api.get(`/v1/batches/${id}`, { key: apiKey })).json.counts as Record<string, number>;
    }
    assert.deepEqual(counts, { queued: 0, running: 0, succeeded: 2, failed: 0 });
  });

  it("no service was refused anything on the way", () => {
    assert.doesNotMatch(harness.stack.output(), /permissions violation/i);
  });

  it("a component cannot append events it does not write", async () => {
    // Account events are identity's, metering's and render's (own templates): storage and webhook write none.
    for (const component of ["storage", "webhook"] as const) {
      const forgedAccount = subjects.account(`key_forged_by_${component}`);
      await assert.rejects((await as(component)).jetstream().publish(forgedAccount, new Uint8Array([1]), { timeout: 2_000 }));
      assert.equal(await stored(streams.ACCOUNTS, forgedAccount), 0, `${component} appended no account event`);
    }

    for (const component of ["identity", "metering", "storage"] as const) {
      const js = (await as(component)).jetstream();
      for (const writer of JOB_WRITERS) {
        const forgedJob = subjects.job(`job_forged_by_${component}`, writer);
        await assert.rejects(js.publish(forgedJob, new Uint8Array([1]), { timeout: 2_000 }));
        assert.equal(await stored(streams.JOBS, forgedJob), 0, `${component} appended no job event as ${writer}`);
      }
    }
  });

  it("a component that writes job events writes them only as itself: no one but render records an outcome", async () => {
    for (const component of JOB_WRITERS) {
      const js = (await as(component)).jetstream();
      for (const writer of JOB_WRITERS.filter((other) => other !== component)) {
        const forgedJob = subjects.job(`job_forged_by_${component}`, writer);
        await assert.rejects(js.publish(forgedJob, new Uint8Array([1]), { timeout: 2_000 }), `${component} publishes as ${writer}`);
        assert.equal(await stored(streams.JOBS, forgedJob), 0, `${component} appended no job event as ${writer}`);
      }
    }
  });

  it("no service may delete or reconfigure a stream, or make a consumer of another's", async () => {
    for (const component of ["gateway", "render", "webhook", "metering"] as const) {
      const jsm = await (await as(component)).jetstreamManager();
      await assert.rejects(jsm.streams.delete(streams.JOBS), `${component} deletes JOBS`);
      await assert.rejects(
        jsm.consumers.add(streams.JOBS, { durable_name: `spy-${component}`, ack_policy: AckPolicy.Explicit }),
        `${component} adds a consumer`,
      );
    }
    const jsm = await (await as("provision")).jetstreamManager();
    assert.equal((await jsm.streams.info(streams.JOBS)).config.name, streams.JOBS, "JOBS is still there");
    await assert.rejects(jsm.consumers.info(streams.JOBS, "spy-gateway"), "no consumer was made");
  });

  it("render writes an output's chunks, but only storage names, reads or removes them", async () => {
    const render = await as("render");
    const written = await writeObjectChunks(render.jetstream(), "outputs", new Uint8Array(1_000).fill(7));
    const chunks = objectStoreStream("outputs");
    assert.equal(await stored(chunks, objectChunkSubject("outputs", written.nuid)), 1, "the chunk is stored");
    await assert.rejects(commitObject(render.jetstream(), "outputs", "out_named_by_render", written), "render names an object");
    const renderJsm = await render.jetstreamManager();
    await assert.rejects(renderJsm.streams.purge(chunks, { filter: objectChunkSubject("outputs", written.nuid) }), "render purges chunks");
    await assert.rejects(renderJsm.streams.getMessage(chunks, { last_by_subj: objectChunkSubject("outputs", written.nuid) }), "render reads chunks");
    const store = await (await as("storage")).jetstream().views.os("outputs");
    assert.equal(await store.info("out_named_by_render"), null, "no object was named");
  });

  it("a service cannot take another's work", async () => {
    const metering = (await as("metering")).jetstream();
    await assert.rejects(
      (async () => {
        const consumer = await metering.consumers.get(streams.RENDER, consumers.renderWorkers);
        await consumer.next({ expires: 1_000 });
      })(),
      "metering pulls render commands",
    );
  });
});

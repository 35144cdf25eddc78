import assert from "node:assert/strict";
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { jobEventsV1, type storageV1 } from "@pressroom/contracts";
import { appendJobEvent, jobEvent, readJobEvents, retainedAcceptance, sealJobSecrets, type JobEvent, type StoredJobEvent } from "@pressroom/domain";
import { AppError, createDb, createLogger, migrateToLatest, publishEvent, streams, subjects } from "@pressroom/platform";
import { isolatedDatabase, provisionNats, startPrivateNats, type PrivateNats } from "@pressroom/stack";
import type { Kysely } from "kysely";
import { connect, type JetStreamClient, type JetStreamManager, type NatsConnection } from "nats";
import { RenderFailure, type DocumentJob, type DocumentProducer, type ProducedDocument } from "../producer/producer";
import type { RenderDb } from "../db";
import { migrations } from "../migrations";
import { attemptLog } from "./attempts";
import { RenderWorker } from "./worker";

/**
 * The worker delivers: it takes render commands from the RENDER work queue,
 * records the job's events, stores what the producer made, and decides from
 * how the making failed whether to try again, charge or refund. Real NATS
 * JetStream with Pressroom's topology; the producer is a fake that does what
 * each test scripts (the real one is tested against Chromium in
 * producer/engine-producer.test.ts), and so is the output store (storage's
 * registration, a service of its own, tested end to end).
 */

/** What the fake producer does on each call for a job, in order ("slow-document": a document after 300 ms). */
type Step = "document" | "slow-document" | "until-cancelled" | Error;

class ScriptedProducer implements DocumentProducer {
  readonly scripts = new Map<string, Step[]>();
  readonly calls: { job: DocumentJob; signal: AbortSignal }[] = [];
  readonly released: string[] = [];
  /** Slow documents being made now, and the most made at once. */
  slowNow = 0;
  slowAtOnce = 0;

  async produce(job: DocumentJob, signal: AbortSignal): Promise<ProducedDocument> {
    this.calls.push({ job, signal });
    const step = this.scripts.get(job.jobId)?.shift() ?? "document";
    if (step instanceof Error) throw step;
    if (step === "slow-document") {
      this.slowAtOnce = Math.max(this.slowAtOnce, ++this.slowNow);
      await new Promise((resolve) => setTimeout(resolve, 300));
      this.slowNow--;
    }
    if (step === "until-cancelled") {
      return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true }));
    }
    return {
      data: Buffer.from(`%PDF made for ${job.jobId}`),
      contentType: "application/pdf",
      format: "pdf",
      pages: 2,
      renderMs: 7,
      filename: `invoice-${job.jobId}.pdf`,
      attachment: false,
      scriptErrors: [],
      release: () => this.released.push(job.jobId),
    };
  }

  callsFor(jobId: string) {
    return this.calls.filter((call) => call.job.jobId === jobId);
  }
}

describe("render worker: delivery, against a fake producer", () => {
  let dir: string;
  let nats: PrivateNats;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let worker: RenderWorker;
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<RenderDb>;
  const producer = new ScriptedProducer();
  const sealing = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const sealTo = { render: sealing.publicKey, webhook: generateKeyPairSync("ec", { namedCurve: "prime256v1" }).publicKey };
  const stored: storageV1.OutputMetadata[] = [];
  const storeFailures: Error[] = [];

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-worker-"));
    nats = await startPrivateNats(path.join(dir, "nats"));
    await provisionNats(nats.url);
    nc = await connect({ servers: nats.url });
    js = nc.jetstream();
    jsm = await nc.jetstreamManager();
    database = await isolatedDatabase("pressroom_render_worker_test");
    db = createDb<RenderDb>({ url: database.url, schema: "render" });
    await migrateToLatest(db, "render", migrations);
    worker = new RenderWorker({
      nc,
      js,
      jsm,
      producer,
      attempts: attemptLog(db),
      store: async (metadata, data) => {
        const failure = storeFailures.shift();
        if (failure) throw failure;
        stored.push(metadata);
        return {
          outputId: `out_${metadata.jobId}`,
          url: `https://outputs.test/${metadata.jobId}`,
          expiresAt: "2030-01-01T00:00:00Z",
          contentType: metadata.contentType,
          sizeBytes: String(data.byteLength),
        };
      },
      announcedOutputMaxBytes: 512 * 1024,
      logger: createLogger("render-test", "silent"),
      workerName: "worker-under-test",
      slots: 2,
      sealingKey: sealing.privateKey,
    });
    await worker.start();
  });

  after(async () => {
    await worker?.stop();
    await worker?.finish();
    await nc?.close();
    await nats?.stop();
    await db?.destroy();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The acceptance of a job, as the gateway makes it. */
  function acceptance(jobId: string, webhookUrl = "", options?: jobEventsV1.RenderOptions): JobEvent {
    return jobEvent("job.accepted", {
      jobId,
      keyId: "key_test",
      source: "gateway",
      accepted: jobEventsV1.JobAccepted.fromPartial({
        kind: jobEventsV1.JobKind.JOB_KIND_RENDER,
        html: "<p>{{n}}</p>",
        dataJson: '{"n":1}',
        plan: "pro",
        webhookUrl,
        options,
      }),
    });
  }

  /** Publishes a job's render command, as the gateway does; `outcome` is what is announced on its inbox. */
  async function submit(
    accepted: JobEvent,
    { appendAcceptance = true, cancelled = false } = {},
  ): Promise<{ outcome: Promise<jobEventsV1.JobOutcomeAnnouncement> }> {
    const inbox = `inbox-${accepted.jobId}`;
    const sub = nc.subscribe(subjects.outcomes(inbox), { max: 1 });
    const outcome = (async () => {
      for await (const msg of sub) return jobEventsV1.JobOutcomeAnnouncement.decode(msg.data);
      throw new Error("no outcome announced");
    })();
    outcome.catch(() => undefined);
    const command = { jobId: accepted.jobId, keyId: accepted.keyId, accepted, outcomeInbox: inbox, cancelled };
    await publishEvent(js, {
      subject: subjects.renderRequested,
      spanSubject: subjects.renderRequested,
      msgId: accepted.jobId,
      type: "render.requested",
      data: jobEventsV1.RenderCommand.encode(command).finish(),
    });
    if (appendAcceptance) await appendJobEvent(js, "gateway", retainedAcceptance(accepted), 0);
    return { outcome };
  }

  /** Submits a job and waits for its outcome. */
  const outcomeOf = async (accepted: JobEvent) => (await (await submit(accepted)).outcome).event!;

  const typesOf = async (jobId: string) =>
    (await readJobEvents(jsm, jobId)).map((e: StoredJobEvent) => `${e.event.type}${e.event.started ? ` ${e.event.started.attempt}` : ""}`);

  /** Until the RENDER work queue holds nothing (every command acked or terminated). */
  async function queueDrained(): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if ((await jsm.streams.info(streams.RENDER)).state.messages === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("the RENDER queue still holds a command");
  }

  it("opens the secrets the gateway sealed to render's key and makes the document with them", async () => {
    const jobId = `job_${randomUUID()}`;
    const options = jobEventsV1.RenderOptions.fromPartial({ encrypt: { userPassword: "user-pw-3", ownerPassword: "owner-pw-7" } });
    assert.equal((await outcomeOf(sealJobSecrets(sealTo, acceptance(jobId, "", options)))).type, "job.succeeded");
    assert.deepEqual(producer.callsFor(jobId)[0]!.job.request.options?.encrypt, options.encrypt);
  });

  it("hands a rendered job's destination to the webhook service as the gateway sealed it to the webhook's key, unopened", async () => {
    const jobId = `job_${randomUUID()}`;
    const clear = acceptance(jobId);
    const destination = { url: "https://bucket.example.com/o.pdf?sig=dest-sig-51e", headers: { "x-api-key": "dest-header-9a0" }, host: "bucket.example.com" };
    const sealed = sealJobSecrets(sealTo, { ...clear, accepted: { ...clear.accepted!, destination } });
    await submit(sealed);
    let raw: Uint8Array | undefined;
    for (let i = 0; i < 200 && !raw; i++) {
      const last = await jsm.streams.getMessage(streams.DESTINATIONS, { last_by_subj: subjects.destinationDelivery }).catch(() => undefined);
      if (last && jobEventsV1.DestinationDelivery.decode(last.data).jobId === jobId) raw = last.data;
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(raw, "render published the job's DESTINATIONS message");
    assert.doesNotMatch(Buffer.from(raw).toString("latin1"), /dest-sig-51e|dest-header-9a0|bucket\.example\.com/);
    assert.equal(jobEventsV1.DestinationDelivery.decode(raw).sealedDestination, sealed.accepted!.sealedDestination, "passed on as it came");
    assert.equal(producer.callsFor(jobId)[0]!.job.request.destination?.url, "", "render renders without the destination's url");
    assert.deepEqual((await typesOf(jobId)).slice(-1), ["job.rendered"]);
  });

  it("stores the document, records job.succeeded after job.started, announces it with its bytes, and only then releases it", async () => {
    const jobId = `job_${randomUUID()}`;
    const announced = await (await submit(acceptance(jobId))).outcome;
    const outcome = announced.event!;
    assert.equal(outcome.type, "job.succeeded");
    assert.equal(Buffer.from(announced.output!.data).toString(), `%PDF made for ${jobId}`, "a sync job's bytes travel with its outcome");
    assert.deepEqual(outcome.succeeded && { ...outcome.succeeded }, {
      outputId: `out_${jobId}`,
      url: `https://outputs.test/${jobId}`,
      expiresAt: "2030-01-01T00:00:00Z",
      contentType: "application/pdf",
      sizeBytes: String(Buffer.byteLength(`%PDF made for ${jobId}`)),
      pages: 2,
      renderMs: 7,
      callback: false,
      scriptErrors: [],
    });
    assert.deepEqual(await typesOf(jobId), ["job.accepted", "job.started 1", "job.succeeded"]);
    const [call] = producer.callsFor(jobId);
    assert.equal(call?.job.keyId, "key_test");
    assert.equal(call?.job.request.html, "<p>{{n}}</p>", "the producer gets the request as admitted, html and data included");
    assert.deepEqual(
      stored.find((m) => m.jobId === jobId),
      { outputId: "", contentType: "application/pdf", filename: `invoice-${jobId}.pdf`, jobId, keyId: "key_test", attachment: false, ttlSeconds: 0 },
      "no lifetime asked: storage's default",
    );
    assert.ok(producer.released.includes(jobId), "released once stored and announced");
  });

  it("asks storage to keep the output as long as the request's options.output_ttl_seconds", async () => {
    const jobId = `job_${randomUUID()}`;
    await (
      await submit(acceptance(jobId, "", jobEventsV1.RenderOptions.fromPartial({ outputTtlSeconds: 600 })))
    ).outcome;
    assert.equal(stored.find((m) => m.jobId === jobId)?.ttlSeconds, 600);
  });

  it("ends a cancelled batch item's job failed (CANCELLED, refunded) without making it", async () => {
    const jobId = `job_${randomUUID()}`;
    await submit(acceptance(jobId), { cancelled: true });
    await queueDrained();
    const events = await readJobEvents(jsm, jobId);
    assert.deepEqual(
      events.map((e) => e.event.type),
      ["job.accepted", "job.failed"],
    );
    const failed = events[1]!.event.failed!;
    assert.equal(failed.code, "CANCELLED");
    assert.equal(failed.refund, true);
    assert.equal(failed.callback, false);
    assert.equal(producer.callsFor(jobId).length, 0, "never made");
  });

  it("tries our failures again, on the next delivery (a browser crash, storage down), and records one outcome", async () => {
    const crashed = `job_${randomUUID()}`;
    producer.scripts.set(crashed, [new RenderFailure("crashed", "the browser stopped while rendering the document"), "document"]);
    assert.equal((await outcomeOf(acceptance(crashed))).type, "job.succeeded");
    assert.equal(producer.callsFor(crashed).length, 2);
    assert.deepEqual(await typesOf(crashed), ["job.accepted", "job.started 1", "job.started 2", "job.succeeded"]);

    const unstored = `job_${randomUUID()}`;
    storeFailures.push(new AppError("UNAVAILABLE", "storage is unavailable", ""));
    assert.equal((await outcomeOf(acceptance(unstored))).type, "job.succeeded");
    assert.equal(producer.callsFor(unstored).length, 2);
    assert.deepEqual(producer.released.filter((id) => id === unstored).length, 2, "the document of the failed attempt was released too");
  });

  it("refunds a failure of ours that happens on every attempt: job.failed INTERNAL_ERROR after the third", async () => {
    const jobId = `job_${randomUUID()}`;
    producer.scripts.set(
      jobId,
      [1, 2, 3].map(() => new RenderFailure("crashed", "no browser was available to render the document")),
    );
    const failed = await outcomeOf(acceptance(jobId, "https://hooks.test/x"));
    assert.equal(failed.type, "job.failed");
    assert.deepEqual({ ...failed.failed }, { code: "INTERNAL_ERROR", message: "the render failed on our side", refund: true, callback: true });
    assert.equal(producer.callsFor(jobId).length, 3);
    assert.deepEqual(await typesOf(jobId), ["job.accepted", "job.started 1", "job.started 2", "job.started 3", "job.failed"]);
    assert.equal(stored.filter((m) => m.jobId === jobId).length, 0);
  });

  /** The browser died under the job (as Generation reports it). */
  const browserDied = () => new RenderFailure("crashed", "the browser stopped while rendering the document", true);

  it("fails a poison job at its second death, charged, never trying it a third time (issue 39)", async () => {
    const jobId = `job_${randomUUID()}`;
    producer.scripts.set(jobId, [browserDied(), browserDied(), "document"]);
    const failed = await outcomeOf(acceptance(jobId));
    assert.equal(failed.type, "job.failed");
    assert.equal(failed.failed?.code, "RENDER_FAILED");
    assert.equal(failed.failed?.refund, false, "charged");
    assert.match(failed.failed?.message ?? "", /died \(2 times\).*a poison job/);
    assert.equal(producer.callsFor(jobId).length, 2);
    assert.deepEqual(await typesOf(jobId), ["job.accepted", "job.started 1", "job.started 2", "job.failed"]);
    assert.deepEqual([...(await attemptLog(db).ends(jobId))], [[1, "died"]], "the first death is written where every replica reads it");
  });

  it("tries a job caught in one death again as before: it succeeds, or is refunded when our failures last", async () => {
    const caught = `job_${randomUUID()}`;
    producer.scripts.set(caught, [browserDied(), "document"]);
    assert.equal((await outcomeOf(acceptance(caught))).type, "job.succeeded");
    const unlucky = `job_${randomUUID()}`;
    const noBrowser = () => new RenderFailure("crashed", "no browser was available to render the document");
    producer.scripts.set(unlucky, [browserDied(), noBrowser(), noBrowser()]);
    const failed = await outcomeOf(acceptance(unlucky));
    assert.deepEqual({ ...failed.failed }, { code: "INTERNAL_ERROR", message: "the render failed on our side", refund: true, callback: false });
    assert.equal(producer.callsFor(unlucky).length, 3);
    assert.deepEqual(
      [...(await attemptLog(db).ends(unlucky))],
      [
        [1, "died"],
        [2, "retried"],
      ],
    );
  });

  it("runs the jobs caught in a death again one at a time on a worker, so that a poison job's next death catches no other", async () => {
    const jobs = [`job_${randomUUID()}`, `job_${randomUUID()}`];
    for (const jobId of jobs) producer.scripts.set(jobId, [browserDied(), "slow-document"]);
    producer.slowAtOnce = 0;
    const outcomes = await Promise.all(jobs.map((jobId) => outcomeOf(acceptance(jobId))));
    assert.deepEqual(
      outcomes.map((event) => event.type),
      ["job.succeeded", "job.succeeded"],
    );
    assert.equal(producer.slowAtOnce, 1, "their second attempts never ran at once, though the worker has two slots");
  });

  it("charges a document fault at once, never trying again: job.failed RENDER_FAILED naming what the document did", async () => {
    const script = `job_${randomUUID()}`;
    producer.scripts.set(script, [new RenderFailure("script_error", "the document's script threw: TypeError: x is undefined")]);
    const failed = await outcomeOf(acceptance(script));
    assert.deepEqual(
      { ...failed.failed },
      { code: "RENDER_FAILED", message: "the document's script threw: TypeError: x is undefined", refund: false, callback: false },
    );
    assert.equal(producer.callsFor(script).length, 1);

    const template = `job_${randomUUID()}`;
    producer.scripts.set(template, [new AppError("RENDER_FAILED", "template error: Parse error on line 1", "")]);
    assert.equal((await outcomeOf(acceptance(template))).failed?.code, "RENDER_FAILED");
    assert.equal(producer.callsFor(template).length, 1);
  });

  it("tries a page lost together with others again, and charges it when it is lost on every attempt", async () => {
    const jobId = `job_${randomUUID()}`;
    producer.scripts.set(
      jobId,
      [1, 2, 3].map(() => new RenderFailure("page_lost", "the document's page was lost together with other pages")),
    );
    const failed = await outcomeOf(acceptance(jobId));
    assert.deepEqual([failed.failed?.code, failed.failed?.refund], ["RENDER_FAILED", false]);
    assert.equal(producer.callsFor(jobId).length, 3);
  });

  it("terminates a poison command: one that cannot be decoded, or without its acceptance, never reaches the producer", async () => {
    const calls = producer.calls.length;
    await js.publish(subjects.renderRequested, new TextEncoder().encode("\u0000not a render command"), { msgID: `poison-${randomUUID()}` });
    const orphan = `job_${randomUUID()}`;
    await js.publish(
      subjects.renderRequested,
      jobEventsV1.RenderCommand.encode({ jobId: orphan, keyId: "key_test", accepted: undefined, outcomeInbox: "", cancelled: false }).finish(),
      {
        msgID: orphan,
      },
    );
    await queueDrained();
    assert.equal(producer.calls.length, calls);
    assert.deepEqual(await readJobEvents(jsm, orphan), [], "nothing recorded for a job that was never accepted");
  });

  it("cancels the making when another delivery started the job meanwhile, and records nothing of its own", async () => {
    const jobId = `job_${randomUUID()}`;
    const accepted = acceptance(jobId);
    // Another delivery's job.started is in, stored before the gateway's acceptance: this
    // delivery reads the acceptance last, so its own job.started is refused.
    await appendJobEvent(js, "render", jobEvent("job.started", { jobId, keyId: "key_test", source: "render", started: { worker: "another", attempt: 1 } }), 0);
    await appendJobEvent(js, "gateway", retainedAcceptance(accepted), 0);
    producer.scripts.set(jobId, ["until-cancelled"]);
    await submit(accepted, { appendAcceptance: false });
    await queueDrained();
    const [call] = producer.callsFor(jobId);
    assert.ok(call?.signal.aborted, "the producer was told to stop");
    assert.deepEqual(await typesOf(jobId), ["job.started 1", "job.accepted"], "no event of this delivery's");
    assert.equal(stored.filter((m) => m.jobId === jobId).length, 0);
  });
});

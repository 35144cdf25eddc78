import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { newId } from "@pressroom/platform";
import { announceOutcome, appendJobEvent, jobEvent, loadJob, openDestination, openJobSecrets, type JobEvent } from "@pressroom/domain";
import { provisionNats, startPrivateNats, type PrivateNats } from "@pressroom/stack";
import { connect, type NatsConnection } from "nats";
import { OutcomeInbox } from "./job-watch";
import { submitJob, type JobBus } from "./submit";

/** Render's sealing key pair and the webhook service's: the gateway is given their public keys. */
const render = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const webhook = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const sealTo = { render: render.publicKey, webhook: webhook.publicKey };

const accepted = (jobId: string) =>
  jobEvent("job.accepted", {
    jobId,
    keyId: "key_watch",
    source: "gateway",
    accepted: jobEventsV1.JobAccepted.fromPartial({
      kind: jobEventsV1.JobKind.JOB_KIND_RENDER,
      templateId: "invoice",
      templateVersion: 1,
      dataJson: "{}",
      plan: "free",
    }),
  });
const succeeded = (jobId: string): JobEvent =>
  jobEvent("job.succeeded", {
    jobId,
    keyId: "key_watch",
    source: "render",
    succeeded: {
      outputId: "out_watch",
      url: "https://x.test/o",
      expiresAt: "2026-11-22T00:00:00.000Z",
      contentType: "application/pdf",
      sizeBytes: "42",
      pages: 1,
      renderMs: 3,
    },
  });

describe("OutcomeInbox and JobWatch: the sync wait", () => {
  let dir: string;
  let nats: PrivateNats;
  let nc: NatsConnection;
  let bus: JobBus;
  let inbox: OutcomeInbox;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-watch-"));
    nats = await startPrivateNats(dir);
    nc = await connect({ servers: nats.url });
    const jsm = await nc.jetstreamManager();
    await provisionNats(nats.url);
    bus = { nc, js: nc.jetstream(), jsm };
    inbox = new OutcomeInbox(bus);
    await nc.flush();
  });

  /** A job accepted in JetStream, and a watch already waiting for it (up to waitMs). */
  async function acceptedAndWatched(waitMs: number) {
    const jobId = newId("job");
    const ack = await appendJobEvent(bus.js, "gateway", accepted(jobId), 0);
    const waiting = inbox.watch(jobId).wait(waitMs);
    return { jobId, ack, waiting };
  }

  after(async () => {
    inbox?.close();
    await nc?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is answered by the worker's announcement on the inbox alone, without reading the history", async () => {
    const jobId = newId("job");
    const waiting = inbox.watch(jobId).wait(10_000);
    // No event of this job is stored: only the announcement can answer.
    announceOutcome(nc, inbox.id, succeeded(jobId));
    const outcome = await waiting;
    assert.equal(outcome?.status, "succeeded");
    assert.equal(outcome?.result?.url, "https://x.test/o");
    assert.equal(outcome?.result?.sizeBytes, "42");
    assert.equal(inbox.size, 0, "the answered watch is no longer kept");
  });

  it("hands an announcement to the watches of its job only, every one of them", async () => {
    const jobId = newId("job");
    const other = inbox.watch(newId("job"));
    const first = inbox.watch(jobId).wait(10_000);
    const second = inbox.watch(jobId).wait(10_000);
    announceOutcome(nc, inbox.id, succeeded(jobId));
    assert.equal((await first)?.status, "succeeded");
    assert.equal((await second)?.status, "succeeded");
    assert.equal(await other.wait(300), undefined, "another job's watch is not answered");
    assert.equal(inbox.size, 0);
  });

  it("hears nothing announced on another inbox, or on the job's own subject", async () => {
    const jobId = newId("job");
    const waiting = inbox.watch(jobId).wait(800);
    announceOutcome(nc, "another-gateway", succeeded(jobId));
    announceOutcome(nc, jobId, succeeded(jobId));
    assert.equal(await waiting, undefined);
  });

  it("hands over the output an announcement carries, as a copy of its own", async () => {
    const jobId = newId("job");
    const waiting = inbox.watch(jobId).wait(10_000);
    const data = Buffer.from("%PDF-1.7 forty-two bytes of a document....");
    announceOutcome(nc, inbox.id, succeeded(jobId), { filename: "invoice-1.pdf", data, attachment: false });
    const outcome = await waiting;
    assert.equal(outcome?.output?.filename, "invoice-1.pdf");
    assert.deepEqual(Buffer.from(outcome!.output!.data), data);
    assert.equal(outcome!.output!.data.byteOffset, 0, "not a view into the NATS message");
    assert.equal(outcome!.output!.data.buffer.byteLength, data.length);
  });

  it("has no output when the announcement carries none", async () => {
    const jobId = newId("job");
    const waiting = inbox.watch(jobId).wait(10_000);
    announceOutcome(nc, inbox.id, succeeded(jobId));
    const outcome = await waiting;
    assert.equal(outcome?.status, "succeeded");
    assert.equal(outcome?.output, undefined);
  });

  it("keeps an outcome announced before wait() was called", async () => {
    const jobId = newId("job");
    const watch = inbox.watch(jobId);
    const failed = { code: "RENDER_FAILED", message: "template error", refund: false };
    announceOutcome(nc, inbox.id, jobEvent("job.failed", { jobId, keyId: "key_watch", source: "render", failed }));
    await nc.flush();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const outcome = await watch.wait(1);
    assert.equal(outcome?.status, "failed");
    assert.equal(outcome?.error?.message, "template error");
  });

  it("drops a watch that is closed unanswered (a failed submit)", () => {
    const watch = inbox.watch(newId("job"));
    assert.equal(inbox.size, 1);
    watch.close();
    assert.equal(inbox.size, 0);
  });

  it("does not take a terminal event that JetStream refused for the job's end", async () => {
    const { jobId, ack, waiting } = await acceptedAndWatched(2_500);
    // A stale writer: the expected sequence is wrong, so the stream refuses it.
    await assert.rejects(appendJobEvent(bus.js, "render", succeeded(jobId), ack.seq));
    assert.equal(await waiting, undefined);
  });

  it("reads the history when a stored terminal event comes without an announcement (the worker died in between)", async () => {
    const { jobId, waiting } = await acceptedAndWatched(4_000);
    const started = performance.now();
    await appendJobEvent(bus.js, "render", succeeded(jobId), 0);
    const outcome = await waiting;
    assert.equal(outcome?.status, "succeeded");
    assert.equal(outcome?.result?.outputId, "out_watch");
    // Answered by the wait's first read of the history (after 1 s), not by the 4 s timeout's last read.
    assert.ok(performance.now() - started < 3_000, "answered by the timeout's read, not by the wait's reads of the history");
  });

  it("submits a job whose command publish timed out after it was stored: the retry is a duplicate, not a 500", async () => {
    const jobId = newId("job");
    let publishes = 0;
    // The real JetStream client; the first publish is stored, then its answer is lost (what a timeout looks like to the gateway).
    const js = new Proxy(bus.js, {
      get: (target, prop, receiver) =>
        prop === "publish"
          ? async (...args: Parameters<typeof target.publish>) => {
              const ack = await target.publish(...args);
              if (publishes++ === 0) throw Object.assign(new Error("TIMEOUT"), { code: "TIMEOUT" });
              return ack;
            }
          : Reflect.get(target, prop, receiver),
    });
    const request = { kind: "render" as const, html: "<p>{{n}}</p>", data: { n: 1 }, dataJson: '{"n":1}' };
    const before = (await bus.jsm.streams.info("RENDER")).state.messages;
    await submitJob(
      { ...bus, js },
      { sealTo, jobId, keyId: "key_submit", plan: "free", request, templateGeneration: 0, templateVersion: 0, templateOwner: "", outcomeInbox: inbox.id },
    );
    assert.equal((await bus.jsm.streams.info("RENDER")).state.messages, before + 1, "one render command, not two");
    const job = await loadJob(bus.jsm, jobId);
    assert.equal(job?.status, "queued");
    const stored = await bus.jsm.streams.getMessage("RENDER", { last_by_subj: "pressroom.render.requested.v1" });
    const command = jobEventsV1.RenderCommand.decode(stored.data);
    assert.equal(command.jobId, jobId);
    assert.equal(command.outcomeInbox, inbox.id, "the command names the inbox its outcome is announced on");
  });

  it("publishes a job's secrets sealed to render's key and its destination to the webhook's: neither the RENDER command nor the job's events hold one in clear", async () => {
    const jobId = newId("job");
    const urlOptions = {
      headers: { "X-Token": "url-token-9f2" },
      cookies: [{ name: "sid", value: "cookie-4d0" }],
      basicAuth: { username: "ada", password: "basic-pw-31c" },
    };
    const request = {
      kind: "render" as const,
      url: "https://example.com/report",
      urlOptions,
      data: {},
      dataJson: "{}",
      options: jobEventsV1.RenderOptions.fromPartial({ encrypt: { ownerPassword: "owner-pw-5e1", userPassword: "user-pw-77a" } }),
      destination: { url: "https://bucket.example.com/o.pdf?sig=dest-sig-0b4", headers: { "x-api-key": "dest-header-c3d" }, host: "bucket.example.com" },
    };
    await submitJob(bus, {
      sealTo,
      jobId,
      keyId: "key_seal",
      plan: "pro",
      request,
      templateGeneration: 0,
      templateVersion: 0,
      templateOwner: "",
      outcomeInbox: "",
    });
    const secrets = /url-token-9f2|cookie-4d0|basic-pw-31c|owner-pw-5e1|user-pw-77a|dest-sig-0b4|dest-header-c3d/;
    const command = await bus.jsm.streams.getMessage("RENDER", { last_by_subj: "pressroom.render.requested.v1" });
    const event = await bus.jsm.streams.getMessage("JOBS", { last_by_subj: `pressroom.job.${jobId}.gateway.v1` });
    for (const stored of [command, event]) assert.doesNotMatch(Buffer.from(stored.data).toString("latin1"), secrets);
    const opened = openJobSecrets(render.privateKey, jobEventsV1.RenderCommand.decode(command.data).accepted!)!;
    assert.deepEqual([opened.urlOptions?.headers, opened.options?.encrypt?.ownerPassword], [urlOptions.headers, "owner-pw-5e1"]);
    assert.equal(opened.destination?.url, "", "render's key does not open the destination");
    const { url, headers } = request.destination;
    assert.deepEqual(openDestination(webhook.privateKey, jobId, opened.sealedDestination), { url, headers });
    assert.equal(jobEventsV1.JobEvent.decode(event.data).accepted?.destination?.host, "bucket.example.com", "the job shows the destination's host");
  });
});

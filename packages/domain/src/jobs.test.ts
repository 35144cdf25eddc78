import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { announcedOutcome, outcomeInboxOf } from "./outcomes";
import { appendJobEvent, foldJob, isAuthentic, jobEvent, nextReplayAttempt, nextScheduledAttempt, retainedAcceptance, type StoredJobEvent } from "./jobs";

const ids = { jobId: "job_0000000000aaaaaaaaaaaaaaaa", keyId: "key_demo" };

/** A history as stored: each event under the writer token its source names. */
function history(...events: jobEventsV1.JobEvent[]): StoredJobEvent[] {
  return events.map((event, i) => ({ seq: i + 10, event, writer: event.source }));
}

const accepted = (webhookUrl = "") =>
  jobEvent("job.accepted", {
    ...ids,
    source: "gateway",
    accepted: jobEventsV1.JobAccepted.fromPartial({
      kind: jobEventsV1.JobKind.JOB_KIND_RENDER,
      templateId: "invoice",
      templateVersion: 1,
      dataJson: "{}",
      webhookUrl,
      plan: "demo",
    }),
  });
const started = (attempt = 1) => jobEvent("job.started", { ...ids, source: "render", started: { worker: "w", attempt } });
const succeeded = () =>
  jobEvent("job.succeeded", {
    ...ids,
    source: "render",
    succeeded: { outputId: "out_x", url: "u", expiresAt: "e", contentType: "application/pdf", sizeBytes: "10", pages: 1, renderMs: 5 },
  });
const failed = () => jobEvent("job.failed", { ...ids, source: "render", failed: { code: "RENDER_FAILED", message: "deadline", refund: false } });

describe("foldJob", () => {
  it("is undefined without an acceptance", () => {
    assert.equal(foldJob(history(started())), undefined);
  });

  it("folds accepted → started → succeeded and tracks each writer's last sequence", () => {
    const job = foldJob(history(accepted(), started(), succeeded()))!;
    assert.equal(job.status, "succeeded");
    assert.equal(job.result?.outputId, "out_x");
    assert.deepEqual(job.lastSeqOf, { gateway: 10, render: 12, webhook: 0 });
    assert.deepEqual(
      job.history.map((e) => e.type),
      ["job.accepted", "job.started", "job.succeeded"],
    );
    assert.equal(job.webhook.state, "none");
  });

  it("never lets a job succeed after failing, or succeed twice", () => {
    const afterFail = foldJob(history(accepted(), started(), failed(), succeeded()))!;
    assert.equal(afterFail.status, "failed");
    assert.equal(afterFail.result, undefined);
    const twice = foldJob(history(accepted(), started(), succeeded(), started(2), succeeded()))!;
    assert.equal(twice.status, "succeeded");
    assert.equal(twice.history.filter((e) => e.type === "job.succeeded").length, 1);
  });

  it("keeps webhook bookkeeping after the terminal event", () => {
    const attempt = jobEvent("job.webhook_attempted", {
      ...ids,
      source: "webhook",
      webhookAttempted: { attempt: 1, status: 503, error: "", nextAttemptAt: "2026-01-01T00:00:05Z" },
    });
    const delivered = jobEvent("job.webhook_delivered", { ...ids, source: "webhook", webhookDelivered: { attempt: 2, status: 200 } });
    const job = foldJob(history(accepted("https://example.com/hook"), started(), succeeded(), attempt))!;
    assert.equal(job.webhook.state, "pending");
    assert.equal(job.webhook.nextAttemptAt, "2026-01-01T00:00:05Z");
    const done = foldJob(history(accepted("https://example.com/hook"), started(), succeeded(), attempt, delivered))!;
    assert.deepEqual(
      { state: done.webhook.state, attempts: done.webhook.attempts, last: done.webhook.lastStatus },
      { state: "delivered", attempts: 2, last: 200 },
    );
  });

  it("numbers replays after every attempt and never as the schedule's first, and keeps them out of the schedule's state", () => {
    const hook = accepted("https://example.com/hook");
    const attempt = (n: number, status: number, more: Partial<jobEventsV1.WebhookAttempted> = {}) =>
      jobEvent("job.webhook_attempted", { ...ids, source: "webhook", webhookAttempted: { attempt: n, status, ...more } });
    const replay = (n: number) =>
      jobEvent("job.webhook_replay_requested", { ...ids, source: "webhook", webhookReplayRequested: { attempt: n, replayOf: "dlv_x" } });

    const ended = foldJob(history(hook, started(), succeeded()))!;
    assert.deepEqual([nextScheduledAttempt(ended), nextReplayAttempt(ended)], [1, 2], "a replay before the first attempt leaves 1 to the schedule");
    const early = replay(2);
    const replayedFirst = foldJob(history(hook, started(), succeeded(), early))!;
    assert.deepEqual([nextScheduledAttempt(replayedFirst), nextReplayAttempt(replayedFirst)], [1, 3]);
    assert.deepEqual(replayedFirst.webhook.replays, [{ id: early.id, attempt: 2, replayOf: "dlv_x", attempted: false }]);

    const retrying = attempt(1, 503, { nextAttemptAt: "2026-01-01T00:00:05Z" });
    const job = foldJob(history(hook, started(), succeeded(), early, attempt(2, 200, { replay: true }), retrying))!;
    assert.deepEqual(
      { state: job.webhook.state, scheduled: job.webhook.scheduledAttempts, last: job.webhook.lastStatus, next: job.webhook.nextAttemptAt },
      { state: "pending", scheduled: 1, last: 503, next: "2026-01-01T00:00:05Z" },
      "the replay's 200 delivers nothing of the schedule",
    );
    assert.equal(job.webhook.replays[0]!.attempted, true);
    assert.deepEqual([nextScheduledAttempt(job), nextReplayAttempt(job)], [3, 3]);
    assert.equal(isAuthentic({ event: early, writer: "webhook" }), true);
    assert.equal(isAuthentic({ event: early, writer: "gateway" }), false, "only the webhook service records a replay");
  });

  it("ignores events stored under a writer that may not write them, but counts their sequence for that writer", () => {
    const forged = (event: jobEventsV1.JobEvent, writer: string) => ({ seq: 20, event, writer });
    for (const writer of ["gateway", "webhook", "metering", ""]) {
      const job = foldJob([...history(accepted(), started()), forged(succeeded(), writer)])!;
      assert.equal(job.status, "rendering", `a job.succeeded from ${writer || "no writer"} is not an outcome`);
      assert.deepEqual(
        job.history.map((e) => e.type),
        ["job.accepted", "job.started"],
      );
    }
    const byGateway = foldJob([...history(accepted(), started()), forged(succeeded(), "gateway")])!;
    assert.equal(byGateway.lastSeqOf.gateway, 20);
    const byNoWriter = foldJob([...history(accepted()), forged(succeeded(), "constructor")])!;
    assert.deepEqual(byNoWriter.lastSeqOf, { gateway: 10, render: 0, webhook: 0 }, "an unknown token is no writer's");
    assert.equal(foldJob([forged(accepted(), "webhook")]), undefined, "an acceptance only the gateway or render may write");
    const restored = foldJob([forged(accepted(), "render")])!;
    assert.equal(restored.status, "queued", "render restores an acceptance the gateway could not append");
  });

  it("knows which writer may write which event", () => {
    const allowed = (event: jobEventsV1.JobEvent) => ["gateway", "render", "webhook"].filter((writer) => isAuthentic({ event, writer }));
    assert.deepEqual(allowed(accepted()), ["gateway", "render"]);
    for (const event of [started(), succeeded(), failed()]) assert.deepEqual(allowed(event), ["render"], event.type);
    const attempt = jobEvent("job.webhook_attempted", {
      ...ids,
      source: "webhook",
      webhookAttempted: { attempt: 1, status: 200, error: "", nextAttemptAt: "" },
    });
    assert.deepEqual(allowed(attempt), ["webhook"]);
    assert.deepEqual(allowed(jobEvent("job.retyped" as never, { ...ids, source: "render" })), []);
  });
});

describe("appendJobEvent", () => {
  it("refuses an event its writer may not write, before publishing", async () => {
    const published: string[] = [];
    const js = { publish: async (subject: string) => void published.push(subject) } as never;
    await assert.rejects(appendJobEvent(js, "gateway", succeeded()), /gateway does not write job.succeeded events/);
    await assert.rejects(appendJobEvent(js, "webhook", failed()), /webhook does not write job.failed events/);
    assert.deepEqual(published, []);
  });
});

describe("announcements", () => {
  it("go to the inbox the command names, or to the job's own subject when it names none (an older gateway)", () => {
    assert.equal(outcomeInboxOf({ jobId: ids.jobId, outcomeInbox: "GWpS2mK0cE1xB0a8yQ4tZr" }), "GWpS2mK0cE1xB0a8yQ4tZr");
    assert.equal(outcomeInboxOf({ jobId: ids.jobId, outcomeInbox: "" }), ids.jobId);
  });

  it("carry the terminal event's job and outcome; anything else is no outcome", () => {
    const succeeded = jobEvent("job.succeeded", {
      ...ids,
      source: "render",
      succeeded: { outputId: "out_1", url: "https://x.test/o", expiresAt: "", contentType: "application/pdf", sizeBytes: "3", pages: 1, renderMs: 1 },
    });
    const data = Buffer.from([1, 2, 3]);
    const outcome = announcedOutcome(
      jobEventsV1.JobOutcomeAnnouncement.encode({ event: succeeded, output: { filename: "a.pdf", data, attachment: true } }).finish(),
    );
    assert.equal(outcome?.id, ids.jobId);
    assert.equal(outcome?.output?.attachment, true);
    assert.equal(outcome?.status, "succeeded");
    assert.deepEqual(Buffer.from(outcome!.output!.data), data);
    assert.equal(announcedOutcome(jobEventsV1.JobOutcomeAnnouncement.encode({ event: accepted(), output: undefined }).finish()), undefined);
    assert.equal(announcedOutcome(jobEventsV1.JobOutcomeAnnouncement.encode({ event: undefined, output: undefined }).finish()), undefined);
  });
});

describe("retainedAcceptance", () => {
  it("keeps no html, data, password or url credential, of the job or of any merged part", () => {
    const urlOptions = {
      headers: { "X-Token": "header-secret-3" },
      cookies: [{ name: "session", value: "cookie-secret-4" }],
      basicAuth: { username: "user-secret-5", password: "basic-secret-6" },
      userAgent: "agent-secret-7",
    };
    const encrypt = {
      userPassword: "user-secret-1",
      ownerPassword: "owner-secret-2",
      permissions: { print: true, copy: false, modify: false, annotate: false },
    };
    const event = jobEvent("job.accepted", {
      ...ids,
      source: "gateway",
      accepted: jobEventsV1.JobAccepted.fromPartial({
        html: "<p>{{name}}</p>",
        dataJson: '{"name":"Ada"}',
        htmlSha256: "h",
        options: { encrypt, metadata: { title: "Kept" } },
        url: "https://example.com/a",
        urlOptions,
        documents: [
          { html: "<p>part</p>", dataJson: '{"part":1}', htmlSha256: "p", options: { encrypt } },
          { url: "https://example.com/b", urlOptions },
        ],
      }),
    });
    const retained = retainedAcceptance(event);
    const wire = Buffer.from(jobEventsV1.JobEvent.encode(retained).finish()).toString("latin1");
    const credentials = ["X-Token", "header-secret-3", "session", "cookie-secret-4", "user-secret-5", "basic-secret-6", "agent-secret-7"];
    for (const secret of ["user-secret-1", "owner-secret-2", "<p>{{name}}</p>", "Ada", "<p>part</p>", '{"part":1}', ...credentials]) {
      assert.ok(!wire.includes(secret), `${secret} is kept`);
    }
    assert.equal(retained.accepted?.htmlSha256, "h");
    assert.equal(retained.accepted?.documents[0]?.htmlSha256, "p");
    assert.equal(retained.accepted?.options?.metadata?.title, "Kept");
    assert.deepEqual(retained.accepted?.options?.encrypt?.permissions, encrypt.permissions);
    assert.equal(event.accepted?.options?.encrypt?.ownerPassword, "owner-secret-2", "the command's own copy is untouched");
    assert.equal(retained.accepted?.documents[1]?.url, "https://example.com/b");
    assert.equal(event.accepted?.urlOptions?.basicAuth?.password, "basic-secret-6", "the command's own copy is untouched");
  });
});

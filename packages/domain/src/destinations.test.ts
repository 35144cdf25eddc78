import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { destinationHeadersProblem, destinationUrlProblem } from "./destinations";
import { foldJob, jobEvent, retainedAcceptance, type StoredJobEvent } from "./jobs";

const ids = { jobId: "job_0000000000bbbbbbbbbbbbbbbb", keyId: "key_dest" };
const SECRET_URL = "https://bucket.s3.example.com/out.pdf?X-Amz-Signature=s3cr3t";

function history(...events: jobEventsV1.JobEvent[]): StoredJobEvent[] {
  return events.map((event, i) => ({ seq: i + 1, event, writer: event.source }));
}

const accepted = (destination?: jobEventsV1.Destination) =>
  jobEvent("job.accepted", {
    ...ids,
    source: "gateway",
    accepted: jobEventsV1.JobAccepted.fromPartial({ kind: jobEventsV1.JobKind.JOB_KIND_RENDER, html: "<p>x</p>", dataJson: "{}", plan: "pro", destination }),
  });
const output = { outputId: "out_x", url: "u", expiresAt: "e", contentType: "application/pdf", sizeBytes: "10", pages: 1, renderMs: 5 };
const rendered = () => jobEvent("job.rendered", { ...ids, source: "render", rendered: output });
const attempted = (attempt: number, status: number, nextAttemptAt = "") =>
  jobEvent("job.destination_attempted", {
    ...ids,
    source: "webhook",
    destinationAttempted: {
      attempt,
      status,
      error: status ? `the destination answered HTTP ${status}` : "",
      nextAttemptAt,
      durationMs: 12,
      host: "bucket.s3.example.com",
    },
  });
const destination = { url: SECRET_URL, headers: { "x-amz-meta-run": "secret-header" }, host: "bucket.s3.example.com" };

describe("a job's destination in the fold", () => {
  it("keeps the job rendering while the destination has not accepted, and records each attempt", () => {
    const job = foldJob(
      history(accepted(destination), rendered(), attempted(1, 503, "2026-11-28T06:00:00.000Z"), attempted(2, 500, "2026-11-28T06:00:05.000Z")),
    )!;
    assert.equal(job.status, "queued", "no job.started in this history");
    assert.equal(job.result, undefined, "no download before the destination accepted");
    assert.equal(job.destination?.state, "pending");
    assert.equal(job.destination?.attempts, 2);
    assert.equal(job.destination?.lastStatus, 500);
    assert.equal(job.destination?.nextAttemptAt, "2026-11-28T06:00:05.000Z");
    assert.equal(job.destination?.rendered?.outputId, "out_x");
    assert.deepEqual(
      job.history.filter((e) => e.destinationAttempt).map((e) => [e.destinationAttempt!.attempt, e.destinationAttempt!.status]),
      [
        [1, 503],
        [2, 500],
      ],
    );
  });

  it("is delivered, then succeeded by render; exhausted, then failed", () => {
    const delivered = jobEvent("job.destination_delivered", { ...ids, source: "webhook", destinationDelivered: { attempt: 3, status: 200 } });
    const succeeded = jobEvent("job.succeeded", { ...ids, source: "render", succeeded: output });
    const ok = foldJob(history(accepted(destination), rendered(), attempted(1, 500, "t"), attempted(3, 200), delivered, succeeded))!;
    assert.equal(ok.destination?.state, "delivered");
    assert.equal(ok.status, "succeeded");

    const exhausted = jobEvent("job.destination_exhausted", { ...ids, source: "webhook", destinationExhausted: { attempts: 1, reason: "no" } });
    const gaveUp = foldJob(history(accepted(destination), rendered(), attempted(1, 403), exhausted))!;
    assert.equal(gaveUp.destination?.state, "exhausted");
    assert.equal(gaveUp.destination?.reason, "no");
  });

  it("ignores destination events of a job without one, and ones written by another writer", () => {
    const job = foldJob(history(accepted(), rendered(), attempted(1, 200)))!;
    assert.equal(job.destination, undefined);
    assert.deepEqual(
      job.history.map((e) => e.type),
      ["job.accepted"],
    );
    const forged = { ...attempted(1, 200), source: "render" };
    assert.equal(foldJob(history(accepted(destination), rendered(), forged))!.destination?.attempts, 0);
  });

  it("keeps only the host in the JOBS stream", () => {
    const kept = retainedAcceptance(accepted(destination));
    assert.deepEqual(kept.accepted?.destination, { url: "", headers: {}, host: "bucket.s3.example.com" });
    const encoded = Buffer.from(jobEventsV1.JobEvent.encode(kept).finish()).toString("latin1");
    assert.ok(!encoded.includes("s3cr3t") && !encoded.includes("secret-header"));
  });
});

describe("destination validation", () => {
  it("takes https URLs on the default port up to 8,192 characters", () => {
    assert.equal(destinationUrlProblem(SECRET_URL), undefined);
    assert.equal(destinationUrlProblem(`https://h.example/${"a".repeat(8_000)}`), undefined);
    assert.match(destinationUrlProblem(`https://h.example/${"a".repeat(8_192)}`) ?? "", /^destination\.url: must be at most 8192/);
    assert.match(destinationUrlProblem("http://h.example/x") ?? "", /^destination\.url: must use https/);
    assert.match(destinationUrlProblem("https://h.example:8443/x") ?? "", /default port/);
  });

  it("refuses reserved, malformed and multi-line headers, naming them", () => {
    assert.equal(destinationHeadersProblem({ "x-ms-blob-type": "BlockBlob", "Content-Type": "application/pdf" }), undefined);
    assert.match(destinationHeadersProblem({ Host: "evil" }) ?? "", /^destination\.headers\.Host: set by Pressroom/);
    assert.match(destinationHeadersProblem({ "bad name": "x" }) ?? "", /not a valid header name/);
    assert.match(destinationHeadersProblem({ a: "x\r\nInjected: 1" }) ?? "", /line breaks/);
    assert.match(destinationHeadersProblem({ a: "1", A: "2" }) ?? "", /given twice/);
    assert.match(destinationHeadersProblem({ a: 1 }) ?? "", /must be a string/);
  });
});

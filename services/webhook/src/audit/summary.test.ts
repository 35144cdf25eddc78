import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { jobEvent } from "@pressroom/domain";
import { summarize } from "./summary";

const base = { jobId: "job_0000000000aaaaaaaaaaaaaaaa", keyId: "key_0000000000aaaaaaaaaaaaaaaa" };

describe("audit payload summary", () => {
  it("keeps no signed URL, no webhook path or query, no document", () => {
    const accepted = summarize(
      jobEvent("job.accepted", {
        ...base,
        source: "gateway",
        accepted: jobEventsV1.JobAccepted.fromPartial({ htmlBytes: 22, dataBytes: 14, webhookUrl: "https://hooks.example.com/in?token=t0k3n", plan: "pro" }),
      }),
    );
    assert.deepEqual(accepted, {
      kind: "render",
      template_id: null,
      template_version: null,
      html_bytes: 22,
      data_bytes: 14,
      plan: "pro",
      webhook_host: "hooks.example.com",
    });
    const succeeded = summarize(
      jobEvent("job.succeeded", {
        ...base,
        source: "render",
        succeeded: jobEventsV1.JobSucceeded.fromPartial({
          outputId: "out_1",
          url: "https://x/v1/outputs/out_1?exp=1&sig=abcdef",
          expiresAt: "2026-11-22T00:00:00.000Z",
          contentType: "application/pdf",
          sizeBytes: "1234",
          pages: 2,
          renderMs: 80,
        }),
      }),
    );
    assert.deepEqual(succeeded, {
      output_id: "out_1",
      content_type: "application/pdf",
      size_bytes: 1234,
      pages: 2,
      render_ms: 80,
      expires_at: "2026-11-22T00:00:00.000Z",
    });
    const text = JSON.stringify([accepted, succeeded]);
    for (const secret of ["sig=", "token", "secret contract", "Ada"]) assert.ok(!text.includes(secret), secret);
  });

  it("summarises webhook bookkeeping", () => {
    assert.deepEqual(
      summarize(
        jobEvent("job.webhook_attempted", {
          ...base,
          source: "webhook",
          webhookAttempted: { attempt: 2, status: 503, error: "", nextAttemptAt: "2026-11-22T00:00:05.000Z" },
        }),
      ),
      {
        attempt: 2,
        status: 503,
        error: null,
        next_attempt_at: "2026-11-22T00:00:05.000Z",
      },
    );
    assert.deepEqual(
      summarize(jobEvent("job.webhook_exhausted", { ...base, source: "webhook", webhookExhausted: { attempts: 1, reason: "the receiver answered 410 Gone" } })),
      {
        attempts: 1,
        reason: "the receiver answered 410 Gone",
      },
    );
  });
});

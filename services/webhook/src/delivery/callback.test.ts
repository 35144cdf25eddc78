import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { foldJob, jobEvent, type JobEvent } from "@pressroom/domain";
import { callbackBody, signatureHeaders, standardWebhooksKey } from "./callback";

function job(events: JobEvent[]) {
  const state = foldJob(events.map((event, i) => ({ seq: i + 1, event, writer: event.source })));
  assert.ok(state);
  return state;
}

const base = { jobId: "job_0000000000aaaaaaaaaaaaaaaa", keyId: "key_0000000000aaaaaaaaaaaaaaaa" };
const accepted = jobEvent("job.accepted", {
  ...base,
  source: "gateway",
  accepted: jobEventsV1.JobAccepted.fromPartial({ webhookUrl: "https://example.com/hook", dataJson: "{}" }),
});

describe("callback body", () => {
  it("on success: the terminal event's id and time, the signed URL, error null, fields in the documented order", () => {
    const succeeded = jobEvent("job.succeeded", {
      ...base,
      source: "render",
      succeeded: jobEventsV1.JobSucceeded.fromPartial({
        outputId: "out_1",
        url: "https://pressroom.example/v1/outputs/out_1?exp=1&sig=ab",
        expiresAt: "2026-11-22T12:00:00.000Z",
        contentType: "application/pdf",
        sizeBytes: "10",
      }),
    });
    const body = callbackBody(job([accepted, succeeded]));
    assert.ok(body);
    assert.equal(body.eventId, succeeded.id);
    const parsed = JSON.parse(body.text) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed), ["id", "type", "created_at", "job_id", "status", "url", "expires_at", "error"]);
    assert.deepEqual(parsed, {
      id: succeeded.id,
      type: "job.succeeded",
      created_at: succeeded.time,
      job_id: base.jobId,
      status: "succeeded",
      url: "https://pressroom.example/v1/outputs/out_1?exp=1&sig=ab",
      expires_at: "2026-11-22T12:00:00.000Z",
      error: null,
    });
  });

  it("on failure: url and expires_at null, error {code, message}; the same bytes every time", () => {
    const failed = jobEvent("job.failed", { ...base, source: "render", failed: { code: "RENDER_FAILED", message: "template error", refund: false } });
    const state = job([accepted, failed]);
    const body = callbackBody(state)!;
    assert.deepEqual(JSON.parse(body.text), {
      id: failed.id,
      type: "job.failed",
      created_at: failed.time,
      job_id: base.jobId,
      status: "failed",
      url: null,
      expires_at: null,
      error: { code: "RENDER_FAILED", message: "template error" },
    });
    const withAttempts = job([
      accepted,
      failed,
      jobEvent("job.webhook_attempted", { ...base, source: "webhook", webhookAttempted: { attempt: 1, status: 500, error: "", nextAttemptAt: "" } }),
    ]);
    assert.equal(callbackBody(withAttempts)!.text, body.text);
  });

  it("is undefined while the job has not finished", () => {
    assert.equal(callbackBody(job([accepted])), undefined);
  });
});

describe("signature headers", () => {
  const secret = `whsec_${randomBytes(32).toString("base64url")}`;
  const body = '{"id":"evt_1","type":"job.succeeded"}';

  it("X-Service-Signature is t=<unix>,v1=<hex HMAC-SHA256(secret, t.body)>", () => {
    const headers = signatureHeaders({ eventId: "evt_1", body, secrets: [secret], timestampSeconds: 1_700_000_000 });
    const expected = createHmac("sha256", secret).update(`1700000000.${body}`).digest("hex");
    assert.equal(headers["X-Service-Signature"], `t=1700000000,v1=${expected}`);
  });

  it("Standard Webhooks: id, timestamp and v1,<base64 HMAC(decoded secret, id.t.body)>", () => {
    const headers = signatureHeaders({ eventId: "evt_1", body, secrets: [secret], timestampSeconds: 1_700_000_000 });
    const key = Buffer.from(secret.slice(6), "base64url");
    assert.equal(key.length, 32);
    const expected = createHmac("sha256", key).update(`evt_1.1700000000.${body}`).digest("base64");
    assert.equal(headers["webhook-id"], "evt_1");
    assert.equal(headers["webhook-timestamp"], "1700000000");
    assert.equal(headers["webhook-signature"], `v1,${expected}`);
  });

  it("during a rotation, one v1 per secret, the current one first, in both schemes", () => {
    const previous = `whsec_${randomBytes(32).toString("base64")}`;
    const headers = signatureHeaders({ eventId: "evt_1", body, secrets: [secret, previous], timestampSeconds: 1_700_000_000 });
    const hex = (s: string) => createHmac("sha256", s).update(`1700000000.${body}`).digest("hex");
    assert.equal(headers["X-Service-Signature"], `t=1700000000,v1=${hex(secret)},v1=${hex(previous)}`);
    const b64 = (s: string) => createHmac("sha256", standardWebhooksKey(s)).update(`evt_1.1700000000.${body}`).digest("base64");
    assert.equal(headers["webhook-signature"], `v1,${b64(secret)} v1,${b64(previous)}`);
  });

  it("decodes the secret in either base64 alphabet to the same key", () => {
    const raw = randomBytes(32);
    assert.deepEqual(standardWebhooksKey(`whsec_${raw.toString("base64url")}`), raw);
    assert.deepEqual(standardWebhooksKey(`whsec_${raw.toString("base64")}`), raw);
  });

  it("signs afresh: another timestamp gives other signatures", () => {
    const a = signatureHeaders({ eventId: "evt_1", body, secrets: [secret], timestampSeconds: 1 });
    const b = signatureHeaders({ eventId: "evt_1", body, secrets: [secret], timestampSeconds: 2 });
    assert.notEqual(a["X-Service-Signature"], b["X-Service-Signature"]);
    assert.notEqual(a["webhook-signature"], b["webhook-signature"]);
  });
});

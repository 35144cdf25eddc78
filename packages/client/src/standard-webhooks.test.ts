import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PressroomSignatureError, constructEvent, signWebhookPayload, verifyStandardWebhook } from "./index";

// The example of the Standard Webhooks specification (github.com/standard-webhooks), computed by its authors.
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TIMESTAMP = 1_614_265_330;
const BODY = '{"test": 2432232314}';
const SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
const now = () => TIMESTAMP * 1000;
const headers = { "webhook-id": ID, "webhook-timestamp": String(TIMESTAMP), "webhook-signature": SIGNATURE };

describe("Standard Webhooks signatures", () => {
  it("verify the specification's example, from a plain object or a Headers, names in any case", () => {
    assert.equal(verifyStandardWebhook(BODY, headers, SECRET, { now }), true);
    assert.equal(verifyStandardWebhook(new TextEncoder().encode(BODY), new Headers(headers), SECRET, { now }), true);
    assert.equal(
      verifyStandardWebhook(BODY, { "Webhook-Id": ID, "WEBHOOK-TIMESTAMP": [String(TIMESTAMP)], "webhook-signature": SIGNATURE }, SECRET, { now }),
      true,
    );
  });

  it("accept any of several signatures (a rotation) and ignore other versions", () => {
    const other = "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    assert.equal(verifyStandardWebhook(BODY, { ...headers, "webhook-signature": `v2,xyz ${other} ${SIGNATURE}` }, SECRET, { now }), true);
    assert.equal(verifyStandardWebhook(BODY, { ...headers, "webhook-signature": other }, SECRET, { now }), false);
  });

  it("refuse a changed body, id or timestamp, another secret, an old timestamp and missing headers", () => {
    assert.equal(verifyStandardWebhook('{"test": 2432232315}', headers, SECRET, { now }), false);
    assert.equal(verifyStandardWebhook(BODY, { ...headers, "webhook-id": "msg_other" }, SECRET, { now }), false);
    assert.equal(verifyStandardWebhook(BODY, { ...headers, "webhook-timestamp": String(TIMESTAMP + 1) }, SECRET, { now }), false);
    assert.equal(verifyStandardWebhook(BODY, headers, "whsec_c2VjcmV0LW90aGVy", { now }), false);
    assert.equal(verifyStandardWebhook(BODY, headers, SECRET, { now: () => (TIMESTAMP + 301) * 1000 }), false);
    assert.equal(verifyStandardWebhook(BODY, headers, SECRET, { now: () => (TIMESTAMP + 301) * 1000, toleranceSeconds: 400 }), true);
    assert.equal(verifyStandardWebhook(BODY, { "webhook-id": ID, "webhook-timestamp": String(TIMESTAMP) }, SECRET, { now }), false);
  });

  it("constructEvent takes a delivery's headers: its X-Service-Signature or its Standard Webhooks headers", () => {
    assert.deepEqual(constructEvent(BODY, headers, SECRET, { now }), { test: 2432232314 });
    const seed = signWebhookPayload(BODY, SECRET, TIMESTAMP);
    assert.deepEqual(constructEvent(BODY, { "x-service-signature": seed }, SECRET, { now }), { test: 2432232314 });
    assert.deepEqual(constructEvent(BODY, seed, SECRET, { now }), { test: 2432232314 });
    assert.throws(
      () => constructEvent(BODY, { ...headers, "webhook-signature": "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" }, SECRET, { now }),
      PressroomSignatureError,
    );
    assert.throws(() => constructEvent(BODY, {}, SECRET, { now }), PressroomSignatureError);
  });
});

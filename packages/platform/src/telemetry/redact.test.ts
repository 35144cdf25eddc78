import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { redactSecrets } from "./redact";

describe("redactSecrets", () => {
  it("removes a signed URL's sig but keeps the rest", () => {
    const sig = "a".repeat(64);
    const out = redactSecrets(`/v1/outputs/out_1?exp=1700000000&sig=${sig}`);
    assert.equal(out, "/v1/outputs/out_1?exp=1700000000&sig=[redacted]");
    assert.equal(redactSecrets(`http://x/y?sig=${sig}&a=1`), "http://x/y?sig=[redacted]&a=1");
  });

  it("removes API keys, webhook secrets and bearer tokens", () => {
    assert.equal(redactSecrets("key pr_live_ABCdef0123456789xyz used"), "key [redacted-key] used");
    assert.equal(redactSecrets("pr_demo_public_try_pressroom_2026"), "[redacted-key]");
    assert.equal(redactSecrets("whsec_abc-DEF_123="), "[redacted-secret]");
    assert.equal(redactSecrets("Authorization: Bearer abc.def"), "Authorization: Bearer [redacted]");
  });

  it("leaves ordinary text alone", () => {
    assert.equal(redactSecrets("POST /v1/render 200"), "POST /v1/render 200");
    assert.equal(redactSecrets("signature=ok"), "signature=ok");
  });
});

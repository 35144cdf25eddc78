import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkSignature, signOutput, signedUrl } from "./signing";

const secret = "s".repeat(64);

describe("signed output URLs", () => {
  it("builds /v1/outputs/<id>?exp&sig with a hex HMAC", () => {
    const url = new URL(signedUrl("https://api.example.com", secret, "out_abc", 1_800_000_000));
    assert.equal(url.pathname, "/v1/outputs/out_abc");
    assert.equal(url.searchParams.get("exp"), "1800000000");
    assert.equal(url.searchParams.get("sig"), signOutput(secret, "out_abc", 1_800_000_000));
    assert.match(url.searchParams.get("sig")!, /^[0-9a-f]{64}$/);
  });

  it("accepts a valid signature before expiry and calls it expired after", () => {
    const sig = signOutput(secret, "out_abc", 1000);
    assert.equal(checkSignature(secret, "out_abc", "1000", sig, 999), "valid");
    assert.equal(checkSignature(secret, "out_abc", "1000", sig, 1000), "valid");
    assert.equal(checkSignature(secret, "out_abc", "1000", sig, 1001), "expired");
  });

  it("rejects tampering with the id, exp or sig, and malformed values", () => {
    const sig = signOutput(secret, "out_abc", 1000);
    assert.equal(checkSignature(secret, "out_abd", "1000", sig, 0), "invalid");
    assert.equal(checkSignature(secret, "out_abc", "9999", sig, 0), "invalid");
    const flipped = `${sig.slice(0, -1)}${sig.endsWith("0") ? "1" : "0"}`;
    assert.equal(checkSignature(secret, "out_abc", "1000", flipped, 0), "invalid");
    assert.equal(checkSignature(secret, "out_abc", "1000", sig.toUpperCase(), 0), "invalid");
    assert.equal(checkSignature(secret, "out_abc", "1e3", sig, 0), "invalid");
    assert.equal(checkSignature(secret, "out_abc", "1000", "xyz", 0), "invalid");
    assert.equal(checkSignature("another secret of enough length......", "out_abc", "1000", sig, 0), "invalid");
  });
});

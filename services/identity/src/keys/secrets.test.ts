import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { DEMO_API_KEY } from "@pressroom/domain";
import { generateApiKey, generateWebhookSecret, hashApiKey, hashesEqual, isWellFormedKey, keyPrefix } from "./secrets";

describe("API keys", () => {
  it("are pr_live_ + 192 random bits in base62 (33 characters)", () => {
    const keys = Array.from({ length: 2_000 }, generateApiKey);
    for (const key of keys) {
      assert.match(key, /^pr_live_[0-9A-Za-z]{33}$/);
      assert.ok(isWellFormedKey(key));
    }
    assert.equal(new Set(keys).size, keys.length, "no two keys alike");
    // 33 base62 digits hold ≈ 196 bits, so the leading digit of a 192-bit number
    // takes only a few values; every other position takes (nearly) all 62.
    for (let i = 9; i < 41; i++) assert.ok(new Set(keys.map((k) => k[i])).size > 40, `position ${i} varies`);
  });

  it("are stored as their SHA-256, and compared in constant time", () => {
    const key = generateApiKey();
    const hash = hashApiKey(key);
    assert.deepEqual(hash, createHash("sha256").update(key).digest());
    assert.equal(hash.length, 32);
    assert.ok(hashesEqual(hash, hashApiKey(key)));
    assert.ok(!hashesEqual(hash, hashApiKey(generateApiKey())));
    assert.ok(!hashesEqual(hash, hash.subarray(0, 31)));
    assert.ok(!keyPrefix(key).includes(key.slice(12)), "the shown prefix is not the key");
  });

  it("accepts the demo key's format and refuses malformed keys before any lookup", () => {
    assert.ok(isWellFormedKey(DEMO_API_KEY));
    for (const bad of ["", "pr_live_", "pr_live_short", "sk_live_0123456789abcdefghij", "pr_live_0123456789abcdef ghij", `pr_live_${"a".repeat(65)}`]) {
      assert.ok(!isWellFormedKey(bad), bad);
    }
  });
});

describe("webhook secrets", () => {
  it("are whsec_ + 32 random bytes, base64url", () => {
    const secrets = Array.from({ length: 500 }, generateWebhookSecret);
    for (const secret of secrets) {
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(Buffer.from(secret.slice(6), "base64url").length, 32);
    }
    assert.equal(new Set(secrets).size, secrets.length);
  });
});

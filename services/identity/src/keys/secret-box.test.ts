import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { SecretBox } from "./secret-box";
import { generateWebhookSecret } from "./secrets";

describe("SecretBox: webhook secrets at rest", () => {
  const box = new SecretBox(randomBytes(32).toString("hex"));
  const secret = generateWebhookSecret();

  it("seals to a value that does not contain the secret, and opens it again", () => {
    const sealed = box.seal("key_a", secret);
    assert.match(sealed, /^v1\.[A-Za-z0-9_-]+$/);
    assert.ok(!sealed.includes(secret.slice(6, 20)));
    assert.notEqual(box.seal("key_a", secret), sealed, "a fresh nonce every time");
    assert.equal(box.open("key_a", sealed), secret);
  });

  it("refuses an altered value, another key id, another encryption key, or plaintext", () => {
    const sealed = box.seal("key_a", secret);
    const flipped = `${sealed.slice(0, -2)}${sealed.at(-2) === "A" ? "B" : "A"}${sealed.at(-1)}`;
    assert.throws(() => box.open("key_a", flipped));
    assert.throws(() => box.open("key_b", sealed));
    assert.throws(() => new SecretBox(randomBytes(32).toString("hex")).open("key_a", sealed));
    assert.throws(() => box.open("key_a", secret), /not a sealed webhook secret/);
  });

  it("needs a 32-byte key", () => {
    assert.throws(() => new SecretBox("abcd"), /32 bytes/);
  });
});

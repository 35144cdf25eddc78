import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { ensureSealingKey, isSealed, readSealingPrivateKey, readSealingPublicKey, seal, sealingPublicKey, unseal } from "./sealing";

describe("sealed values (issue 39, item 8)", () => {
  const pair = () => generateKeyPairSync("ec", { namedCurve: "prime256v1" });

  it("opens with the private key for the same purpose, and shows nothing of the plaintext", () => {
    const { publicKey, privateKey } = pair();
    const sealed = seal(publicKey, "hunter2 ünï", "render.encrypt.owner_password");
    assert.ok(isSealed(sealed));
    assert.doesNotMatch(sealed, /hunter2/);
    assert.notEqual(seal(publicKey, "hunter2 ünï", "render.encrypt.owner_password"), sealed, "a fresh ephemeral key and nonce each time");
    assert.equal(unseal(privateKey, sealed, "render.encrypt.owner_password"), "hunter2 ünï");
  });

  it("refuses another key, another purpose, a tampered value and a value that is not sealed", () => {
    const { publicKey, privateKey } = pair();
    const sealed = seal(publicKey, "secret", "a");
    assert.throws(() => unseal(pair().privateKey, sealed, "a"));
    assert.throws(() => unseal(privateKey, sealed, "b"));
    const bytes = Buffer.from(sealed.slice("sealed:v1:".length), "base64url");
    bytes[bytes.length - 1]! ^= 1;
    assert.throws(() => unseal(privateKey, `sealed:v1:${bytes.toString("base64url")}`, "a"));
    assert.throws(() => unseal(privateKey, "secret", "a"), /not a sealed value/);
  });

  it("seals to a public key given as PEM, as a certificate's, or derived from the private key", () => {
    const { publicKey, privateKey } = pair();
    const pem = publicKey.export({ format: "pem", type: "spki" }).toString();
    assert.equal(unseal(privateKey, seal(sealingPublicKey(pem), "x", "p"), "p"), "x");
    const privatePem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    assert.equal(unseal(privateKey, seal(sealingPublicKey(privatePem), "y", "p"), "p"), "y");
  });

  it("makes a key pair once, the private key readable by its owner only", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "sealing-test-"));
    try {
      const files = ensureSealingKey(path.join(dir, "keys"));
      assert.equal(statSync(files.key).mode & 0o777, 0o600);
      const again = ensureSealingKey(path.join(dir, "keys"));
      const sealed = seal(readSealingPublicKey(again.publicKey), "kept", "p");
      assert.equal(unseal(readSealingPrivateKey(files.key), sealed, "p"), "kept");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("makes a pair of another name beside it, whose private key opens nothing sealed to the first", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "sealing-test-"));
    try {
      const render = ensureSealingKey(dir);
      const webhook = ensureSealingKey(dir, "destination-sealing");
      assert.deepEqual(webhook, { key: path.join(dir, "destination-sealing.key"), publicKey: path.join(dir, "destination-sealing.pub") });
      assert.equal(statSync(webhook.key).mode & 0o777, 0o600);
      const sealed = seal(readSealingPublicKey(render.publicKey), "render's", "p");
      assert.throws(() => unseal(readSealingPrivateKey(webhook.key), sealed, "p"));
      assert.equal(unseal(readSealingPrivateKey(webhook.key), seal(readSealingPublicKey(webhook.publicKey), "webhook's", "p"), "p"), "webhook's");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

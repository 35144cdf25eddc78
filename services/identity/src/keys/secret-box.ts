import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Encrypts webhook secrets at rest: AES-256-GCM with the key from
 * WEBHOOK_SECRET_ENCRYPTION_KEY, a random 96-bit nonce per value, and the
 * API key's id as associated data, so a value copied to another row does not
 * decrypt. Stored as `v1.<base64url(nonce | tag | ciphertext)>`.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(hexKey: string) {
    this.key = Buffer.from(hexKey, "hex");
    if (this.key.length !== 32) throw new TypeError("the webhook secret encryption key must be 32 bytes (64 hex characters)");
  }

  seal(keyId: string, plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(keyId, "utf8"));
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString("base64url")}`;
  }

  /** Throws when the value was altered, belongs to another key id, or was sealed with another key. */
  open(keyId: string, sealed: string): string {
    const [version, payload] = sealed.split(".", 2);
    if (version !== VERSION || !payload) throw new Error("not a sealed webhook secret");
    const bytes = Buffer.from(payload, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", this.key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(keyId, "utf8"));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  }
}

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

const KEY_FORMAT = /^pr_(live|demo|test)_[A-Za-z0-9_]{16,64}$/;

function base62(bytes: Buffer): string {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let n = BigInt(`0x${bytes.toString("hex")}`);
  let out = "";
  while (n > 0n) {
    out = alphabet[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(Math.ceil((bytes.length * 8) / Math.log2(62)), "0");
}

/** A new API key: 192 random bits, base62, with a recognisable prefix. */
export function generateApiKey(): string {
  return `pr_live_${base62(randomBytes(24))}`;
}

/** A new webhook signing secret: whsec_ + 32 random bytes in standard base64, as Standard Webhooks verifiers expect. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export function isWellFormedKey(apiKey: string): boolean {
  return KEY_FORMAT.test(apiKey);
}

/** Keys are stored only as their SHA-256 (they are random, so no salt is needed). */
export function hashApiKey(apiKey: string): Buffer {
  return createHash("sha256").update(apiKey, "utf8").digest();
}

export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The first characters of a key, safe to show operators. */
export function keyPrefix(apiKey: string): string {
  return apiKey.slice(0, 12);
}

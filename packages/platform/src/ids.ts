import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * A prefixed, time-sortable id such as job_0mz8k3q1ab2cd3ef4gh5ij6k: 10
 * base-36 characters of milliseconds then 16 random ones (~82 bits).
 * Safe as a NATS subject token and in URLs.
 */
export function newId(prefix: string): string {
  const time = Date.now().toString(36).padStart(10, "0");
  const bytes = randomBytes(16);
  let random = "";
  for (const byte of bytes) random += ALPHABET[byte % 36];
  return `${prefix}_${time}${random}`;
}

import { isIPv4, isIPv6 } from "node:net";

/** A parsed IP address: 4 bytes for IPv4, 16 bytes for IPv6. */
export type ParsedIp = { family: 4; bytes: Uint8Array; text: string } | { family: 6; bytes: Uint8Array; text: string };

/**
 * Strips the brackets of a URL-style IPv6 host (`[::1]` → `::1`). Anything
 * else is returned unchanged.
 */
export function stripBrackets(host: string): string {
  return host.length >= 2 && host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

function parseIPv4Bytes(text: string): Uint8Array | null {
  if (!isIPv4(text)) return null;
  const parts = text.split(".");
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const n = Number(parts[i]);
    if (!Number.isInteger(n) || n < 0 || n > 255) return null;
    bytes[i] = n;
  }
  return bytes;
}

function parseIPv6Bytes(input: string): Uint8Array | null {
  if (!isIPv6(input)) return null;
  // A zone id (fe80::1%eth0) does not change which address it is.
  const percent = input.indexOf("%");
  let text = percent === -1 ? input : input.slice(0, percent);

  // A trailing dotted quad (::ffff:1.2.3.4) is the last two groups.
  let v4Tail: Uint8Array | null = null;
  const lastColon = text.lastIndexOf(":");
  const last = text.slice(lastColon + 1);
  if (last.includes(".")) {
    v4Tail = parseIPv4Bytes(last);
    if (!v4Tail) return null;
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }

  const halves = text.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];

  const bytes = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const group = groups[i];
    if (group === undefined || !/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    const value = parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  }
  if (v4Tail) bytes.set(v4Tail, 12);
  return bytes;
}

/**
 * Parses an IP literal: dotted-quad IPv4, or IPv6 in any textual form
 * (compressed, with an embedded dotted quad, with a zone id, in brackets).
 * Returns null for anything that is not an IP literal, including the
 * non-standard IPv4 spellings (`0177.0.0.1`, `2130706433`, `127.1`) that only
 * a resolver would interpret.
 */
export function parseIp(input: string): ParsedIp | null {
  const text = stripBrackets(input);
  // Brackets are only meaningful around IPv6.
  const bracketed = text !== input;
  if (!bracketed) {
    const v4 = parseIPv4Bytes(text);
    if (v4) return { family: 4, bytes: v4, text: formatIPv4(v4) };
  }
  const v6 = parseIPv6Bytes(text);
  if (v6) return { family: 6, bytes: v6, text: formatIPv6(v6) };
  return null;
}

/** Dotted-quad text of 4 bytes (or of bytes[offset..offset+3]). */
export function formatIPv4(bytes: Uint8Array, offset = 0): string {
  return [0, 1, 2, 3].map((i) => bytes[offset + i] ?? 0).join(".");
}

/** The full, uncompressed, lower-case form of a 16-byte IPv6 address. */
export function formatIPv6(bytes: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return groups.join(":");
}

/** True when the first `prefixBits` bits of `bytes` equal those of `prefix`. */
export function hasPrefix(bytes: Uint8Array, prefix: Uint8Array, prefixBits: number): boolean {
  const fullBytes = Math.floor(prefixBits / 8);
  for (let i = 0; i < fullBytes; i++) if (bytes[i] !== prefix[i]) return false;
  const rest = prefixBits % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((bytes[fullBytes] ?? 0) & mask) === ((prefix[fullBytes] ?? 0) & mask);
}

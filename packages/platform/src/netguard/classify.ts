import { BlockList } from "node:net";
import { formatIPv4, hasPrefix, parseIp, type ParsedIp } from "./ip";

/**
 * Development/test relaxations of the guard. Both default to false and must
 * stay false in production.
 */
export interface GuardOptions {
  /**
   * DEVELOPMENT/TEST ONLY. Permits loopback: 127.0.0.0/8, ::1 and their
   * IPv4-mapped forms (::ffff:127.0.0.1). Never permits 0.0.0.0 or ::.
   */
  allowLoopback?: boolean;
  /**
   * DEVELOPMENT/TEST ONLY. Permits the private ranges: 10.0.0.0/8,
   * 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10 (CGNAT), fc00::/7 (unique
   * local) and their IPv4-mapped forms. Does not permit loopback (see
   * allowLoopback), link-local or cloud metadata addresses.
   */
  allowPrivate?: boolean;
}

/** Why an address is not public, in one word a customer can read. */
export type AddressKind = "loopback" | "private" | "link-local" | "metadata" | "multicast" | "reserved" | "invalid";

export interface Classification {
  allowed: boolean;
  /** Set when denied: names the range, e.g. "loopback (127.0.0.0/8)" or "cloud metadata". */
  reason?: string;
  /** Set when denied: the category of the range. */
  kind?: AddressKind;
}

interface Verdict {
  kind: AddressKind | "public";
  reason?: string;
  /** False for addresses reached through a translator (NAT64, 6to4, Teredo): the options never relax those. */
  relaxable: boolean;
}

interface Range {
  block: BlockList;
  kind: AddressKind;
  reason: string;
}

function range(family: "ipv4" | "ipv6", cidr: string, kind: AddressKind, name?: string): Range {
  const [network, bits] = cidr.split("/");
  const block = new BlockList();
  block.addSubnet(network ?? "", Number(bits), family);
  return { block, kind, reason: name === "cloud metadata" ? name : `${name ?? kind} (${cidr})` };
}

// Order matters: the first matching range gives the reason.
const IPV4_RANGES: readonly Range[] = [
  range("ipv4", "169.254.169.254/32", "metadata", "cloud metadata"), // AWS, GCP, Azure, OCI, DigitalOcean...
  range("ipv4", "168.63.129.16/32", "metadata", "cloud metadata"), // Azure WireServer (a public IP only VMs reach)
  range("ipv4", "100.100.100.200/32", "metadata", "cloud metadata"), // Alibaba Cloud
  range("ipv4", "192.0.0.192/32", "metadata", "cloud metadata"), // Oracle Cloud (legacy)
  range("ipv4", "255.255.255.255/32", "reserved", "limited broadcast"),
  range("ipv4", "0.0.0.0/8", "reserved", '"this network"'),
  range("ipv4", "10.0.0.0/8", "private", "private-use"),
  range("ipv4", "100.64.0.0/10", "private", "shared address space (CGNAT)"),
  range("ipv4", "127.0.0.0/8", "loopback", "loopback"),
  range("ipv4", "169.254.0.0/16", "link-local", "link-local"),
  range("ipv4", "172.16.0.0/12", "private", "private-use"),
  range("ipv4", "192.0.0.0/24", "reserved", "IETF protocol assignments"),
  range("ipv4", "192.0.2.0/24", "reserved", "documentation (TEST-NET-1)"),
  range("ipv4", "192.88.99.0/24", "reserved", "6to4 relay anycast"),
  range("ipv4", "192.168.0.0/16", "private", "private-use"),
  range("ipv4", "198.18.0.0/15", "reserved", "benchmarking"),
  range("ipv4", "198.51.100.0/24", "reserved", "documentation (TEST-NET-2)"),
  range("ipv4", "203.0.113.0/24", "reserved", "documentation (TEST-NET-3)"),
  range("ipv4", "224.0.0.0/4", "multicast", "multicast"),
  range("ipv4", "240.0.0.0/4", "reserved", "reserved"),
];

// Checked after ::/128, ::1, the IPv4-mapped/compatible forms and NAT64,
// 6to4 and Teredo, which are handled in code because they embed an IPv4.
const IPV6_RANGES: readonly Range[] = [
  range("ipv6", "fd00:ec2::254/128", "metadata", "cloud metadata"), // AWS IMDS over IPv6
  range("ipv6", "::ffff:0:0:0/96", "reserved", "IPv4-translated"),
  range("ipv6", "100::/64", "reserved", "discard-only"),
  range("ipv6", "2001:2::/48", "reserved", "benchmarking"),
  range("ipv6", "2001:10::/28", "reserved", "ORCHID"),
  range("ipv6", "2001:20::/28", "reserved", "ORCHIDv2"),
  range("ipv6", "2001:db8::/32", "reserved", "documentation"),
  range("ipv6", "3fff::/20", "reserved", "documentation"),
  range("ipv6", "fc00::/7", "private", "unique-local"),
  range("ipv6", "fe80::/10", "link-local", "link-local"),
  range("ipv6", "fec0::/10", "reserved", "site-local (deprecated)"),
  range("ipv6", "ff00::/8", "multicast", "multicast"),
];

const GLOBAL_UNICAST = range("ipv6", "2000::/3", "reserved");

function prefixBytes(text: string): Uint8Array {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(`netguard: bad built-in prefix ${text}`);
  return parsed.bytes;
}
const MAPPED = prefixBytes("::ffff:0:0"); // ::ffff:0:0/96
const NAT64_WKP = prefixBytes("64:ff9b::"); // 64:ff9b::/96 (RFC 6052)
const NAT64_LOCAL = prefixBytes("64:ff9b:1::"); // 64:ff9b:1::/48 (RFC 8215)
const SIX_TO_FOUR = prefixBytes("2002::"); // 2002::/16
const TEREDO = prefixBytes("2001::"); // 2001::/32
const ZERO = new Uint8Array(16);

/**
 * The IPv4 positions inside a 64:ff9b:1::/48 address for each prefix length
 * RFC 6052 allows within a /48 (/48, /56, /64, /96). The operator's choice is
 * not visible from here, so every reading must be public.
 */
const NAT64_LOCAL_LAYOUTS: readonly (readonly number[])[] = [
  [6, 7, 9, 10],
  [7, 9, 10, 11],
  [9, 10, 11, 12],
  [12, 13, 14, 15],
];

function classifyV4Bytes(bytes: Uint8Array): Verdict {
  const text = formatIPv4(bytes);
  for (const r of IPV4_RANGES) {
    if (r.block.check(text, "ipv4")) return { kind: r.kind, reason: r.reason, relaxable: true };
  }
  return { kind: "public", relaxable: true };
}

/** Classifies IPv4 addresses embedded by a translation mechanism: every one must be public. */
function classifyEmbedded(label: string, candidates: Uint8Array[]): Verdict {
  for (const v4 of candidates) {
    const inner = classifyV4Bytes(v4);
    if (inner.kind !== "public") {
      return { kind: inner.kind, reason: `${label} embedding ${formatIPv4(v4)}: ${inner.reason ?? inner.kind}`, relaxable: false };
    }
  }
  return { kind: "public", relaxable: false };
}

function pick(bytes: Uint8Array, positions: readonly number[]): Uint8Array {
  return Uint8Array.from(positions, (i) => bytes[i] ?? 0);
}

function classifyV6Bytes(bytes: Uint8Array, text: string): Verdict {
  if (hasPrefix(bytes, ZERO, 128)) return { kind: "reserved", reason: "unspecified (::/128)", relaxable: true };
  if (hasPrefix(bytes, ZERO, 127) && bytes[15] === 1) return { kind: "loopback", reason: "loopback (::1/128)", relaxable: true };

  if (hasPrefix(bytes, MAPPED, 96)) {
    // The kernel connects to the embedded IPv4 itself: classify it as such.
    const v4 = bytes.subarray(12);
    const inner = classifyV4Bytes(v4);
    if (inner.kind === "public") return inner;
    return { ...inner, reason: `IPv4-mapped (::ffff:0:0/96) ${formatIPv4(v4)}: ${inner.reason ?? inner.kind}` };
  }
  if (hasPrefix(bytes, ZERO, 96)) return { kind: "reserved", reason: "IPv4-compatible (::/96, deprecated)", relaxable: false };

  if (hasPrefix(bytes, NAT64_WKP, 96)) return classifyEmbedded("NAT64 (64:ff9b::/96)", [bytes.subarray(12)]);
  if (hasPrefix(bytes, NAT64_LOCAL, 48)) {
    return classifyEmbedded(
      "local-use NAT64 (64:ff9b:1::/48; every RFC 6052 layout is checked)",
      NAT64_LOCAL_LAYOUTS.map((layout) => pick(bytes, layout)),
    );
  }
  if (hasPrefix(bytes, SIX_TO_FOUR, 16)) return classifyEmbedded("6to4 (2002::/16)", [bytes.subarray(2, 6)]);
  if (hasPrefix(bytes, TEREDO, 32)) {
    const server = bytes.subarray(4, 8);
    const client = Uint8Array.from(bytes.subarray(12, 16), (b) => b ^ 0xff);
    return classifyEmbedded("Teredo (2001::/32)", [server, client]);
  }

  for (const r of IPV6_RANGES) {
    if (r.block.check(text, "ipv6")) return { kind: r.kind, reason: r.reason, relaxable: true };
  }
  if (!GLOBAL_UNICAST.block.check(text, "ipv6")) {
    return { kind: "reserved", reason: "not global unicast (outside 2000::/3)", relaxable: true };
  }
  return { kind: "public", relaxable: true };
}

function verdictOf(ip: ParsedIp): Verdict {
  return ip.family === 4 ? classifyV4Bytes(ip.bytes) : classifyV6Bytes(ip.bytes, ip.text);
}

/**
 * Classifies an IP literal. Allowed only for public unicast addresses; every
 * special-purpose range (private, loopback, link-local, cloud metadata,
 * multicast, documentation, reserved...) is denied with a reason naming the
 * range. IPv4 embedded in IPv6 (IPv4-mapped, NAT64, 6to4, Teredo) is
 * classified by the embedded IPv4. Accepts bracketed IPv6 (`[::1]`) and zone
 * ids. Anything that is not an IP literal is denied ("not an IP address").
 *
 * `options` are development/test relaxations; see GuardOptions.
 */
export function classifyAddress(ip: string, options: GuardOptions = {}): Classification {
  const parsed = parseIp(ip);
  if (!parsed) return { allowed: false, reason: "not an IP address", kind: "invalid" };
  const verdict = verdictOf(parsed);
  if (verdict.kind === "public") return { allowed: true };
  if (verdict.relaxable) {
    if (verdict.kind === "loopback" && options.allowLoopback) return { allowed: true };
    if (verdict.kind === "private" && options.allowPrivate) return { allowed: true };
  }
  return { allowed: false, reason: verdict.reason ?? verdict.kind, kind: verdict.kind };
}

import { isIPv4, isIPv6 } from "node:net";

/** The 8 groups of an IPv6 address, expanded (handles "::" and an embedded dotted quad). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().split("%")[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split(".").map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const left = head ? head.split(":") : [];
  const right = tail === undefined ? [] : tail ? tail.split(":") : [];
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  return [...left, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...right].map((group) => parseInt(group, 16));
}

/**
 * The bucket a client's requests are throttled in (identity's signups, the
 * gateway's anonymous reads): the IPv4 address itself (also when written as
 * IPv4-mapped IPv6), or the /64 network of an IPv6 address, since one
 * subscriber usually holds a whole /64. Which address is the client's (behind
 * trusted proxies) the gateway decides.
 */
export function clientBucket(clientIp: string): string {
  const ip = clientIp.trim();
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return ip || "unknown";
  const groups = ipv6Groups(ip);
  if (!groups) return ip;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}

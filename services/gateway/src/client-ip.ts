import { BlockList, isIP } from "node:net";
import type { Context } from "koa";

function normalise(ip: string): string {
  return ip.startsWith("::ffff:") && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}

/** The proxies whose X-Forwarded-For is believed: addresses or CIDR ranges, IPv4 or IPv6. */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly size: number;

  /** Parses TRUSTED_PROXIES ("10.0.0.0/8, 127.0.0.1, fd00::/8"); throws naming a bad entry. */
  constructor(spec: string) {
    const entries = spec
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    for (const entry of entries) {
      const [address = "", prefix] = entry.split("/");
      const family = isIP(address);
      const bits = prefix === undefined ? undefined : Number(prefix);
      if (family === 0 || (bits !== undefined && (!/^\d{1,3}$/.test(prefix!) || bits > (family === 4 ? 32 : 128)))) {
        throw new Error(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`);
      }
      const type = family === 4 ? "ipv4" : "ipv6";
      if (bits === undefined) this.list.addAddress(address, type);
      else this.list.addSubnet(address, bits, type);
    }
    this.size = entries.length;
  }

  has(ip: string): boolean {
    const family = isIP(ip);
    return this.size > 0 && family !== 0 && this.list.check(ip, family === 4 ? "ipv4" : "ipv6");
  }
}

/**
 * The client's IP: the socket's peer, unless that peer is a trusted proxy,
 * in which case the right-most X-Forwarded-For address that is not itself a
 * trusted proxy (what the outermost trusted proxy saw).
 */
export function clientIp(ctx: Context, trusted: TrustedProxies): string {
  const peer = normalise(ctx.req.socket.remoteAddress ?? "unknown");
  if (!trusted.has(peer)) return peer;
  const forwarded = (ctx.get("x-forwarded-for") || "")
    .split(",")
    .map((part) => normalise(part.trim()))
    .filter(Boolean);
  for (let i = forwarded.length - 1; i >= 0; i--) {
    if (!trusted.has(forwarded[i]!)) return forwarded[i]!;
  }
  return forwarded[0] ?? peer;
}

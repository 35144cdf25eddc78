import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Context } from "koa";
import { TrustedProxies, clientIp } from "./client-ip";

function ctx(peer: string, xff?: string): Context {
  return { req: { socket: { remoteAddress: peer } }, get: (name: string) => (name === "x-forwarded-for" ? (xff ?? "") : "") } as unknown as Context;
}

describe("clientIp", () => {
  it("uses the socket's peer and ignores X-Forwarded-For when no proxy is trusted", () => {
    const none = new TrustedProxies("");
    assert.equal(clientIp(ctx("203.0.113.9", "198.51.100.1"), none), "203.0.113.9");
    assert.equal(clientIp(ctx("::ffff:203.0.113.9"), none), "203.0.113.9");
  });

  it("ignores X-Forwarded-For from a peer that is not trusted", () => {
    assert.equal(clientIp(ctx("203.0.113.9", "198.51.100.1"), new TrustedProxies("10.0.0.0/8")), "203.0.113.9");
  });

  it("takes the right-most untrusted address behind trusted proxies (addresses and CIDR ranges)", () => {
    const trusted = new TrustedProxies("10.0.0.0/8, 192.0.2.1, fd00::/8");
    assert.equal(clientIp(ctx("10.1.2.3", "198.51.100.1"), trusted), "198.51.100.1");
    assert.equal(clientIp(ctx("::ffff:10.1.2.3", "6.6.6.6, 198.51.100.1, 192.0.2.1"), trusted), "198.51.100.1", "a spoofed left-most entry is not believed");
    assert.equal(clientIp(ctx("fd00::5", "2001:db8::1"), trusted), "2001:db8::1");
    assert.equal(clientIp(ctx("10.1.2.3"), trusted), "10.1.2.3", "no header: the proxy itself");
    assert.equal(clientIp(ctx("10.1.2.3", "10.9.9.9"), trusted), "10.9.9.9", "only trusted hops: the left-most");
  });

  it("refuses a malformed TRUSTED_PROXIES entry, naming it", () => {
    for (const bad of ["10.0.0.0/33", "localhost", "10.0.0/8", "::1/129", "1.2.3.4/x"]) {
      assert.throws(() => new TrustedProxies(bad), new RegExp(`TRUSTED_PROXIES: "${bad.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}"`));
    }
  });
});

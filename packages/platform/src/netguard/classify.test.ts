import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { classifyAddress } from "./index";

// [address, allowed, part of the reason when denied]
const TABLE: [string, boolean, string?][] = [
  // Public unicast.
  ["8.8.8.8", true],
  ["1.1.1.1", true],
  ["93.184.215.14", true],
  ["2606:4700:4700::1111", true],
  ["2001:4860:4860::8888", true],
  ["[2606:4700:4700::1111]", true],
  ["::ffff:8.8.8.8", true],
  ["::ffff:808:808", true],
  ["64:ff9b::808:808", true],
  ["64:ff9b::1.1.1.1", true],
  ["2002:808:808::1", true],
  // Boundaries around the private ranges.
  ["172.15.255.255", true],
  ["172.16.0.0", false, "172.16.0.0/12"],
  ["172.31.255.255", false, "172.16.0.0/12"],
  ["172.32.0.0", true],
  ["100.63.255.255", true],
  ["100.64.0.0", false, "100.64.0.0/10"],
  ["100.127.255.255", false, "CGNAT"],
  ["100.128.0.0", true],
  ["9.255.255.255", true],
  ["11.0.0.0", true],
  ["126.255.255.255", true],
  ["128.0.0.0", true],
  ["169.253.255.255", true],
  ["169.255.0.0", true],
  ["192.167.255.255", true],
  ["192.169.0.0", true],
  ["198.17.255.255", true],
  ["198.20.0.0", true],
  ["223.255.255.255", true],
  // IPv4 denied ranges.
  ["0.0.0.0", false, "0.0.0.0/8"],
  ["0.1.2.3", false, "0.0.0.0/8"],
  ["10.0.0.1", false, "10.0.0.0/8"],
  ["10.255.255.255", false, "10.0.0.0/8"],
  ["100.100.100.200", false, "cloud metadata"],
  ["127.0.0.1", false, "loopback"],
  ["127.255.255.254", false, "127.0.0.0/8"],
  ["169.254.0.1", false, "link-local"],
  ["169.254.169.254", false, "cloud metadata"],
  ["169.254.170.2", false, "169.254.0.0/16"],
  ["172.16.0.1", false, "private"],
  ["192.0.0.1", false, "192.0.0.0/24"],
  ["192.0.2.10", false, "192.0.2.0/24"],
  ["192.88.99.1", false, "192.88.99.0/24"],
  ["192.168.0.1", false, "192.168.0.0/16"],
  ["192.168.255.255", false, "192.168.0.0/16"],
  ["198.18.0.1", false, "198.18.0.0/15"],
  ["198.19.255.255", false, "198.18.0.0/15"],
  ["198.51.100.7", false, "198.51.100.0/24"],
  ["203.0.113.9", false, "203.0.113.0/24"],
  ["224.0.0.1", false, "multicast"],
  ["239.255.255.250", false, "224.0.0.0/4"],
  ["240.0.0.1", false, "240.0.0.0/4"],
  ["255.255.255.254", false, "240.0.0.0/4"],
  ["255.255.255.255", false, "broadcast"],
  ["168.63.129.16", false, "cloud metadata"],
  // IPv6 denied ranges.
  ["::", false, "::/128"],
  ["::1", false, "loopback"],
  ["[::1]", false, "loopback"],
  ["0:0:0:0:0:0:0:1", false, "::1/128"],
  ["fc00::1", false, "fc00::/7"],
  ["fd12::1", false, "unique-local"],
  ["fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false, "fc00::/7"],
  ["fe80::1", false, "fe80::/10"],
  ["fe80::1%eth0", false, "link-local"],
  ["febf::1", false, "fe80::/10"],
  ["fec0::1", false, "site-local"],
  ["ff02::1", false, "multicast"],
  ["ff05::1:3", false, "ff00::/8"],
  ["2001:db8::1", false, "2001:db8::/32"],
  ["2001:db8:ffff::1", false, "documentation"],
  ["fd00:ec2::254", false, "cloud metadata"],
  ["100::1", false, "100::/64"],
  ["4000::1", false, "2000::/3"],
  // IPv4-mapped: classified by the embedded IPv4.
  ["::ffff:127.0.0.1", false, "loopback"],
  ["::ffff:7f00:1", false, "127.0.0.0/8"],
  ["0:0:0:0:0:ffff:7f00:1", false, "loopback"],
  ["::ffff:169.254.169.254", false, "cloud metadata"],
  ["::ffff:a9fe:a9fe", false, "cloud metadata"],
  ["[::ffff:a9fe:a9fe]", false, "cloud metadata"],
  ["::FFFF:A9FE:A9FE", false, "cloud metadata"],
  ["::ffff:10.0.0.1", false, "10.0.0.0/8"],
  ["::ffff:0.0.0.0", false, "0.0.0.0/8"],
  // IPv4-compatible and IPv4-translated.
  ["::127.0.0.1", false, "IPv4-compatible"],
  ["::808:808", false, "::/96"],
  ["::ffff:0:127.0.0.1", false, "IPv4-translated"],
  // NAT64: classified by the embedded IPv4.
  ["64:ff9b::7f00:1", false, "loopback"],
  ["64:ff9b::169.254.169.254", false, "cloud metadata"],
  ["64:ff9b::a00:1", false, "10.0.0.0/8"],
  ["64:ff9b:1::a9fe:a9fe", false, "64:ff9b:1::/48"],
  ["64:ff9b:1:a00:0:100::", false, "10.0.0.1"], // the /48 layout (bytes 6, 7, 9, 10)
  ["64:ff9b:1:a00:0:100:808:808", false, "10.0.0.1"], // public in the /96 layout, private in the /48 one
  // 6to4 and Teredo embed IPv4 too.
  ["2002:a00:1::1", false, "10.0.0.1"],
  ["2001:0:808:808::80ff:fffe", false, "127.0.0.1"], // Teredo client = ~0x80fffffe
  // Not IP addresses.
  ["localhost", false, "not an IP address"],
  ["example.com", false, "not an IP address"],
  ["", false, "not an IP address"],
  ["127.1", false, "not an IP address"],
  ["2130706433", false, "not an IP address"],
  ["0177.0.0.1", false, "not an IP address"],
  ["[127.0.0.1]", false, "not an IP address"],
  ["1::2::3", false, "not an IP address"],
  ["::1 ", false, "not an IP address"],
];

describe("classifyAddress", () => {
  it("covers a table of at least 40 addresses", () => {
    assert.ok(TABLE.length >= 40);
  });

  for (const [address, allowed, reason] of TABLE) {
    it(`${JSON.stringify(address)} → ${allowed ? "allowed" : `denied (${reason})`}`, () => {
      const result = classifyAddress(address);
      assert.equal(result.allowed, allowed, JSON.stringify(result));
      if (allowed) {
        assert.equal(result.reason, undefined);
      } else {
        assert.ok(result.reason?.includes(reason ?? "\u0000"), `reason ${JSON.stringify(result.reason)} should mention ${reason}`);
      }
    });
  }

  it('gives 169.254.169.254 the reason "cloud metadata"', () => {
    assert.deepEqual(classifyAddress("169.254.169.254"), { allowed: false, reason: "cloud metadata", kind: "metadata" });
  });

  it("allowLoopback permits 127/8, ::1 and their mapped forms, and nothing else", () => {
    const opts = { allowLoopback: true };
    for (const a of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "::ffff:127.0.0.1", "::ffff:7f00:1"]) {
      assert.equal(classifyAddress(a, opts).allowed, true, a);
    }
    for (const a of ["0.0.0.0", "::", "10.0.0.1", "169.254.169.254", "::ffff:a9fe:a9fe", "64:ff9b::7f00:1", "::127.0.0.1", "fe80::1"]) {
      assert.equal(classifyAddress(a, opts).allowed, false, a);
    }
  });

  it("allowPrivate permits the private ranges, not loopback, link-local or metadata", () => {
    const opts = { allowPrivate: true };
    for (const a of ["10.1.2.3", "172.20.0.5", "192.168.1.1", "100.64.0.1", "fd12::1", "::ffff:192.168.1.1"]) {
      assert.equal(classifyAddress(a, opts).allowed, true, a);
    }
    for (const a of ["127.0.0.1", "::1", "169.254.169.254", "169.254.1.1", "fe80::1", "fd00:ec2::254", "100.100.100.200", "0.0.0.0", "224.0.0.1"]) {
      assert.equal(classifyAddress(a, opts).allowed, false, a);
    }
  });
});

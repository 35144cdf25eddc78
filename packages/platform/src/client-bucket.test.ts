import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clientBucket } from "./client-bucket";

describe("clientBucket", () => {
  it("keeps IPv4 addresses, also IPv4-mapped ones", () => {
    assert.equal(clientBucket("203.0.113.7"), "203.0.113.7");
    assert.equal(clientBucket("::ffff:203.0.113.7"), "203.0.113.7");
    assert.equal(clientBucket("::ffff:cb00:7107"), "203.0.113.7");
  });

  it("throttles IPv6 by /64, however the address is written", () => {
    const bucket = clientBucket("2001:db8:1:2::1");
    assert.equal(bucket, "2001:db8:1:2::/64");
    assert.equal(clientBucket("2001:0DB8:0001:0002:ffff:ffff:ffff:ffff"), bucket);
    assert.equal(clientBucket("2001:db8:1:2:0:0:0:99%eth0"), bucket);
    assert.notEqual(clientBucket("2001:db8:1:3::1"), bucket);
    assert.equal(clientBucket("::1"), "0:0:0:0::/64");
  });

  it("uses anything else as it is", () => {
    assert.equal(clientBucket(""), "unknown");
    assert.equal(clientBucket("not-an-ip"), "not-an-ip");
  });
});

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RecentOutputs, type RecentOutput } from "./recent-outputs";

const T0 = Date.UTC(2026, 0, 1);

function output(size: number, expiresAt = new Date(T0 + 60_000)): RecentOutput {
  return { info: { contentType: "application/pdf", filename: "a.pdf", attachment: false, expiresAt }, bytes: Buffer.alloc(size, size % 256) };
}

/** A cache on a clock the test moves. */
function recent(maxBytes: number, maxEntryBytes: number) {
  const clock = { now: T0 };
  return { cache: new RecentOutputs({ maxBytes, maxEntryBytes, now: () => clock.now }), clock };
}

describe("recent outputs", () => {
  it("serves what was added, by id, and counts its bytes", () => {
    const { cache } = recent(100, 100);
    const a = output(40);
    cache.add("out_a", a);
    assert.equal(cache.get("out_a"), a);
    assert.equal(cache.get("out_b"), undefined);
    assert.equal(cache.totalBytes, 40);
    cache.delete("out_a");
    assert.equal(cache.get("out_a"), undefined);
    assert.equal(cache.totalBytes, 0);
  });

  it("evicts the least recently used outputs until the total fits", () => {
    const { cache } = recent(100, 100);
    cache.add("out_a", output(40));
    cache.add("out_b", output(40));
    assert.ok(cache.get("out_a"), "a is now more recently used than b");
    cache.add("out_c", output(40));
    assert.equal(cache.get("out_b"), undefined, "b was the least recently used");
    assert.ok(cache.get("out_a"));
    assert.ok(cache.get("out_c"));
    assert.equal(cache.totalBytes, 80);

    cache.add("out_d", output(90));
    assert.equal(cache.get("out_a"), undefined, "as many leave as needed");
    assert.equal(cache.get("out_c"), undefined);
    assert.ok(cache.get("out_d"));
    assert.equal(cache.totalBytes, 90);
  });

  it("does not keep an output over the per-entry cap (nor over the total), and a too large replacement drops the old one", () => {
    const { cache } = recent(100, 50);
    assert.equal(cache.accepts(50), true);
    assert.equal(cache.accepts(51), false);
    cache.add("out_a", output(50));
    cache.add("out_b", output(51));
    assert.ok(cache.get("out_a"));
    assert.equal(cache.get("out_b"), undefined);
    assert.equal(cache.totalBytes, 50);

    cache.add("out_a", output(51));
    assert.equal(cache.get("out_a"), undefined, "the old bytes are not served for the new output");
    assert.equal(cache.totalBytes, 0);

    const { cache: small } = recent(30, 50);
    assert.equal(small.accepts(31), false, "an entry cap above the total is limited by the total");
    small.add("out_a", output(31));
    assert.equal(small.get("out_a"), undefined);
  });

  it("never serves an expired output, and drops it", () => {
    const { cache, clock } = recent(100, 100);
    cache.add("out_a", output(40, new Date(T0 + 1_000)));
    clock.now = T0 + 1_000;
    assert.ok(cache.get("out_a"), "served up to its expiry instant");
    clock.now = T0 + 1_001;
    assert.equal(cache.get("out_a"), undefined);
    assert.equal(cache.totalBytes, 0, "dropped");
    clock.now = T0 + 500;
    assert.equal(cache.get("out_a"), undefined, "gone for good");

    cache.add("out_b", output(40, new Date(T0 + 499)));
    assert.equal(cache.get("out_b"), undefined, "an already expired output is not kept");
    assert.equal(cache.totalBytes, 0);
  });

  it("keeps nothing when its total is 0", () => {
    const { cache } = recent(0, 100);
    assert.equal(cache.accepts(0), false);
    cache.add("out_a", output(0));
    cache.add("out_b", output(10));
    assert.equal(cache.get("out_a"), undefined);
    assert.equal(cache.get("out_b"), undefined);
    assert.equal(cache.totalBytes, 0);
  });
});

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { deadlineOf, estimatedPagesOverCap } from "./job";

describe("page estimate", () => {
  it("only fails fast when the estimate is well over the cap", () => {
    assert.equal(estimatedPagesOverCap({ height: 1000 * 600, breaks: 0 }, 1000, 500), false);
    assert.equal(estimatedPagesOverCap({ height: 1000 * 10_000, breaks: 0 }, 1000, 500), true);
    assert.equal(estimatedPagesOverCap({ height: 100, breaks: 10_000 }, 1000, 500), true);
  });
});

describe("deadline of a render", () => {
  it("runs for what is left of the job's deadline and names the whole one", () => {
    assert.deepEqual(deadlineOf({ deadlineMs: 5_930, jobDeadlineMs: 6_000 }, 30_000), { ms: 5_930, namedMs: 6_000 });
    assert.deepEqual(deadlineOf({ deadlineMs: 2_000 }, 30_000), { ms: 2_000, namedMs: 2_000 });
  });

  it("never goes past the engine's own deadline", () => {
    assert.deepEqual(deadlineOf({}, 30_000), { ms: 30_000, namedMs: 30_000 });
    assert.deepEqual(deadlineOf({ deadlineMs: 0 }, 30_000), { ms: 30_000, namedMs: 30_000 });
    assert.deepEqual(deadlineOf({ deadlineMs: 45_000, jobDeadlineMs: 50_000 }, 30_000), { ms: 30_000, namedMs: 30_000 });
    assert.deepEqual(deadlineOf({ deadlineMs: 5_930, jobDeadlineMs: 50_000 }, 30_000), { ms: 5_930, namedMs: 30_000 });
  });
});

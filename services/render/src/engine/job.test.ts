import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { estimatedPagesOverCap } from "./job";

describe("page estimate", () => {
  it("only fails fast when the estimate is well over the cap", () => {
    assert.equal(estimatedPagesOverCap({ height: 1000 * 600, breaks: 0 }, 1000, 500), false);
    assert.equal(estimatedPagesOverCap({ height: 1000 * 10_000, breaks: 0 }, 1000, 500), true);
    assert.equal(estimatedPagesOverCap({ height: 100, breaks: 10_000 }, 1000, 500), true);
  });
});

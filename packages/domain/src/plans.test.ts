import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_OUTPUT_TTL_SECONDS } from "@pressroom/platform";
import { MIN_OUTPUT_TTL_SECONDS, PLAN_ORDER, PLANS } from "./plans";

describe("plans: how long an output may be asked to live", () => {
  it("each plan's maximum lies between the minimum and what the output bucket keeps, and never falls with a dearer plan", () => {
    let previous = MIN_OUTPUT_TTL_SECONDS;
    for (const id of PLAN_ORDER) {
      const max = PLANS[id].maxOutputTtlSeconds;
      assert.ok(max >= previous, `${id}: ${max} s is below the plan before it (${previous} s)`);
      assert.ok(max <= MAX_OUTPUT_TTL_SECONDS, `${id}: ${max} s is past the bucket's ${MAX_OUTPUT_TTL_SECONDS} s`);
      previous = max;
    }
    assert.equal(PLANS.business.maxOutputTtlSeconds, MAX_OUTPUT_TTL_SECONDS, "the top plan reaches the 7 days the API offers");
  });
});

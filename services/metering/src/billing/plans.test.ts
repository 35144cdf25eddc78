import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PAID_PLANS } from "@pressroom/domain";
import { isUpgrade, upgradeProblem } from "./plans";

describe("what a checkout may buy", () => {
  it("only paid plans above the key's plan", () => {
    assert.deepEqual(PAID_PLANS, ["starter", "pro", "business"]);
    for (const [from, to] of [
      ["free", "starter"],
      ["free", "business"],
      ["starter", "pro"],
      ["pro", "business"],
    ] as const) {
      assert.equal(upgradeProblem(from, to), undefined, `${from} → ${to}`);
      assert.equal(isUpgrade(from, to), true);
    }
  });

  it("refuses the same plan, a downgrade, an unpriced or unknown plan, and the demo key, as PLAN_INVALID with a way forward", () => {
    const cases: [string, string, RegExp, RegExp][] = [
      ["pro", "pro", /already on the pro plan/, /higher plan: business/],
      ["business", "business", /already on the business plan/, /highest plan/],
      ["business", "starter", /downgrade from your business plan/, /contact support/],
      ["pro", "free", /cannot be bought/, /starter, pro, business/],
      ["free", "gold", /cannot be bought/, /starter, pro, business/],
      ["demo", "pro", /demo key cannot be upgraded/, /POST \/v1\/signup/],
    ];
    for (const [from, to, message, hint] of cases) {
      const problem = upgradeProblem(from, to);
      assert.equal(problem?.code, "PLAN_INVALID", `${from} → ${to}`);
      assert.equal(problem?.httpStatus, 422);
      assert.match(problem!.message, message);
      assert.match(problem!.hint, hint);
    }
    assert.equal(isUpgrade("pro", "starter"), false);
  });
});

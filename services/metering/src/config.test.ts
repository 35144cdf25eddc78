import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "@pressroom/platform";
import { loadMeteringConfig } from "./config";

describe("metering configuration", () => {
  it("defaults to the local payment provider", () => {
    const config = loadMeteringConfig({ DATABASE_URL: "postgres://db/pressroom" });
    assert.equal(config.STRIPE_SECRET_KEY, "");
    assert.equal(config.SLOT_LEASE_SECONDS, 900);
    assert.equal(config.CHECKOUT_TTL_SECONDS, 7200);
    assert.ok(Object.isFrozen(config));
  });

  it("refuses a Stripe key without the webhook signing secret, naming the variable", () => {
    assert.throws(() => loadMeteringConfig({ DATABASE_URL: "postgres://db/pressroom", STRIPE_SECRET_KEY: "sk_test_x" }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /STRIPE_WEBHOOK_SECRET: required when STRIPE_SECRET_KEY is set/);
      return true;
    });
    assert.equal(loadMeteringConfig({ DATABASE_URL: "x", STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_x" }).STRIPE_WEBHOOK_SECRET, "whsec_x");
  });
});

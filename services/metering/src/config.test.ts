import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ConfigError, ensureGrpcCertificates, grpcTlsEnv } from "@pressroom/platform";
import { loadMeteringConfig as loadWithoutTls } from "./config";

describe("metering configuration", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-metering-config-"));
  let tls: NodeJS.ProcessEnv;
  before(async () => {
    tls = grpcTlsEnv((await ensureGrpcCertificates(dir, ["metering"])).metering);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const loadMeteringConfig = (source: NodeJS.ProcessEnv) => loadWithoutTls({ ...tls, ...source });

  it("has no default payment provider: BILLING_PROVIDER is required, naming the variable", () => {
    for (const source of [
      { DATABASE_URL: "postgres://db/pressroom" },
      { DATABASE_URL: "x", STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_x" },
      { DATABASE_URL: "x", BILLING_PROVIDER: "free" },
    ]) {
      assert.throws(
        () => loadMeteringConfig(source),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.match(err.message, /BILLING_PROVIDER: required: "stripe", or "local" for development/);
          return true;
        },
      );
    }
  });

  it("takes the local provider only when asked for by name", () => {
    const config = loadMeteringConfig({ DATABASE_URL: "postgres://db/pressroom", BILLING_PROVIDER: "local" });
    assert.equal(config.BILLING_PROVIDER, "local");
    assert.equal(config.SLOT_LEASE_SECONDS, 900);
    assert.equal(config.CHECKOUT_TTL_SECONDS, 7200);
    assert.ok(Object.isFrozen(config));
  });

  it("refuses the stripe provider without its API key and webhook signing secret, naming them", () => {
    assert.throws(
      () => loadMeteringConfig({ DATABASE_URL: "postgres://db/pressroom", BILLING_PROVIDER: "stripe" }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /STRIPE_SECRET_KEY: required when BILLING_PROVIDER is stripe/);
        assert.match(err.message, /STRIPE_WEBHOOK_SECRET: required when BILLING_PROVIDER is stripe/);
        return true;
      },
    );
    const config = loadMeteringConfig({ DATABASE_URL: "x", BILLING_PROVIDER: "stripe", STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_x" });
    assert.equal(config.STRIPE_WEBHOOK_SECRET, "whsec_x");
  });

  it("refuses a sweep too slow to renew a running job's lease in time, naming both settings", () => {
    assert.throws(
      () => loadMeteringConfig({ DATABASE_URL: "x", BILLING_PROVIDER: "local", SLOT_LEASE_SECONDS: "60", SWEEP_INTERVAL_MS: "30000" }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /SWEEP_INTERVAL_MS: must be under half of SLOT_LEASE_SECONDS \(30000 ms\)/);
        return true;
      },
    );
    assert.equal(
      loadMeteringConfig({ DATABASE_URL: "x", BILLING_PROVIDER: "local", SLOT_LEASE_SECONDS: "60", SWEEP_INTERVAL_MS: "29999" }).SWEEP_INTERVAL_MS,
      29999,
    );
  });
});

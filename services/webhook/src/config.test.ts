import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadWebhookConfig } from "./config";

const required = { DATABASE_URL: "postgres://localhost/x" };

describe("webhook config", () => {
  it("keeps every development/test setting off by default, with the production schedule", () => {
    const config = loadWebhookConfig(required);
    assert.equal(config.WEBHOOK_ALLOW_LOOPBACK, false);
    assert.equal(config.WEBHOOK_EXTRA_CA_FILE, undefined);
    assert.equal(config.WEBHOOK_DEV_TARGET_PORT, undefined);
    assert.equal(config.WEBHOOK_TIMEOUT_MS, 10_000);
    assert.equal(config.WEBHOOK_RETRY_BASE_MS, 5_000);
    assert.equal(config.WEBHOOK_RETRY_WINDOW_MS, 24 * 3_600_000);
  });

  it("refuses the test port without loopback allowed", () => {
    assert.throws(() => loadWebhookConfig({ ...required, WEBHOOK_DEV_TARGET_PORT: "8443" }), /WEBHOOK_DEV_TARGET_PORT/);
    assert.equal(loadWebhookConfig({ ...required, WEBHOOK_DEV_TARGET_PORT: "8443", WEBHOOK_ALLOW_LOOPBACK: "true" }).WEBHOOK_DEV_TARGET_PORT, 8443);
  });

  it("names a missing DATABASE_URL", () => {
    assert.throws(() => loadWebhookConfig({}), /DATABASE_URL/);
  });
});

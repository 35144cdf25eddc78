import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureGrpcCertificates, ensureSealingKey, grpcTlsEnv } from "@pressroom/platform";
import { loadWebhookConfig } from "./config";

describe("webhook config", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-webhook-config-"));
  let required: NodeJS.ProcessEnv;
  before(async () => {
    required = {
      DATABASE_URL: "postgres://localhost/x",
      ...grpcTlsEnv((await ensureGrpcCertificates(dir, ["webhook"])).webhook),
      DESTINATION_SEALING_KEY: ensureSealingKey(dir, "destination-sealing").key,
    };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

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

  it("needs its gRPC certificate, key and CA as readable files, naming each setting", () => {
    assert.throws(
      () => loadWebhookConfig({ DATABASE_URL: "postgres://localhost/x" }),
      (err: Error) => ["GRPC_TLS_CA: required", "GRPC_TLS_CERT: required", "GRPC_TLS_KEY: required"].every((problem) => err.message.includes(problem)),
    );
    assert.throws(() => loadWebhookConfig({ ...required, GRPC_TLS_KEY: path.join(dir, "absent.key") }), /GRPC_TLS_KEY: cannot read the private key/);
  });

  it("needs its sealing key, without which no destination opens, naming DESTINATION_SEALING_KEY when missing or unreadable", () => {
    const without = Object.fromEntries(Object.entries(required).filter(([name]) => name !== "DESTINATION_SEALING_KEY"));
    assert.throws(() => loadWebhookConfig(without), /DESTINATION_SEALING_KEY: required/);
    assert.throws(() => loadWebhookConfig({ ...required, DESTINATION_SEALING_KEY: path.join(dir, "missing.key") }), /DESTINATION_SEALING_KEY: cannot read/);
  });
});

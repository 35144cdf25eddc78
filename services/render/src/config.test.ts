import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureGrpcCertificates, ensureSealingKey, grpcTlsEnv } from "@pressroom/platform";
import { loadRenderConfig } from "./config";

describe("render config: the ports documents' sub-resources may reach", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-render-config-"));
  let required: NodeJS.ProcessEnv;
  before(async () => {
    required = {
      DATABASE_URL: "postgres://localhost/x",
      ...grpcTlsEnv((await ensureGrpcCertificates(dir, ["render"])).render),
      SEALING_KEY: ensureSealingKey(dir).key,
    };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("are 80 and 443 unless told otherwise, with loopback refused", () => {
    const config = loadRenderConfig(required);
    assert.deepEqual(config.RENDER_SUBRESOURCE_PORTS, [80, 443]);
    assert.equal(config.RENDER_ALLOW_LOOPBACK, false);
  });

  it("take a comma-separated list", () => {
    assert.deepEqual(loadRenderConfig({ ...required, RENDER_SUBRESOURCE_PORTS: "80, 443,8443" }).RENDER_SUBRESOURCE_PORTS, [80, 443, 8443]);
  });

  it("refuse what is not a list of ports, naming the variable", () => {
    for (const value of ["", "0", "80,http", "70000", "443,-1"]) {
      assert.throws(() => loadRenderConfig({ ...required, RENDER_SUBRESOURCE_PORTS: value }), /RENDER_SUBRESOURCE_PORTS/, JSON.stringify(value));
    }
  });

  it("(and the sealing key, without which render cannot open a job's secrets) fail the start naming SEALING_KEY when missing or unreadable", () => {
    const without = Object.fromEntries(Object.entries(required).filter(([name]) => name !== "SEALING_KEY"));
    assert.throws(() => loadRenderConfig(without), /SEALING_KEY: required/);
    assert.throws(() => loadRenderConfig({ ...required, SEALING_KEY: path.join(dir, "missing.key") }), /SEALING_KEY: cannot read/);
  });
});

import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import type { AddressInfo } from "node:net";
import { baseConfigShape, loadConfig, z } from "./config";
import { Lifecycle, startHealthServer } from "./lifecycle";
import { createLogger } from "./logger";

describe("the probe server", () => {
  it("answers /readyz 503 in the three-field error shape until ready, then 200; unknown paths 404 the same way", async () => {
    const logger = createLogger("probe-test", "error", new Writable({ write: (_chunk, _encoding, done) => done() }));
    const lifecycle = new Lifecycle(logger, 1_000);
    let dependencyUp = true;
    lifecycle.addReadinessCheck(() => dependencyUp);
    const { server, port } = await startHealthServer(lifecycle, 0, "127.0.0.1");
    const get = async (path: string) => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    try {
      const starting = await get("/readyz");
      assert.equal(starting.status, 503);
      assert.deepEqual(Object.keys(starting.body), ["error", "code", "hint"]);
      assert.equal(starting.body.code, "UNAVAILABLE");

      lifecycle.setReady();
      assert.deepEqual(await get("/readyz"), { status: 200, body: { status: "ready" } });
      dependencyUp = false;
      assert.equal((await get("/readyz")).status, 503);
      assert.deepEqual(await get("/livez"), { status: 200, body: { status: "ok" } });

      const unknown = await get("/nope");
      assert.equal(unknown.status, 404);
      assert.deepEqual(Object.keys(unknown.body), ["error", "code", "hint"]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("listens on loopback unless HEALTH_HOST says otherwise (a container's 0.0.0.0, which the chart sets)", async () => {
    const logger = createLogger("probe-test", "error", new Writable({ write: (_chunk, _encoding, done) => done() }));
    const bound = async (config: NodeJS.ProcessEnv) => {
      const { HEALTH_HOST } = loadConfig(z.object(baseConfigShape), config);
      const { server } = await startHealthServer(new Lifecycle(logger, 1_000), 0, HEALTH_HOST);
      const { address } = server.address() as AddressInfo;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return address;
    };
    assert.equal(await bound({}), "127.0.0.1");
    assert.equal(await bound({ HEALTH_HOST: "0.0.0.0" }), "0.0.0.0");
  });
});

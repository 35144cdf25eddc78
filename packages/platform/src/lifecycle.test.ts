import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
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
});

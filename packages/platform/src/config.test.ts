import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, env, loadConfig, z } from "./config";

const schema = z.object({ DATABASE_URL: z.string().min(1), GRPC_PORT: env.port(7001), FLAG: env.bool(false) });

describe("loadConfig", () => {
  it("parses, applies defaults and freezes", () => {
    const config = loadConfig(schema, { DATABASE_URL: "postgres://x", FLAG: "yes" });
    assert.deepEqual({ ...config }, { DATABASE_URL: "postgres://x", GRPC_PORT: 7001, FLAG: true });
    assert.ok(Object.isFrozen(config));
  });

  it("fails fast naming every bad variable", () => {
    assert.throws(
      () => loadConfig(schema, { GRPC_PORT: "70000" }),
      (err: unknown) =>
        err instanceof ConfigError && err.problems.some((p) => p.startsWith("DATABASE_URL")) && err.problems.some((p) => p.startsWith("GRPC_PORT")),
    );
  });
});

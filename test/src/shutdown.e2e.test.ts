import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestStack, stopService, type TestStack } from "@pressroom/stack";

/**
 * Every service, started by the platform's runner, stops on SIGTERM through
 * all its shutdown stages: each step ends without failing or timing out, the
 * last line says so, and the process exits 0 long before it would be killed.
 */
describe("SIGTERM stops every service cleanly", () => {
  let stack: TestStack | undefined;
  before(async () => {
    stack = await startTestStack({});
  });
  after(async () => {
    await stack?.stop();
  });

  it("each service logs its shutdown, no step fails, and it exits 0", async () => {
    for (const [name, proc] of stack!.services.processes) {
      await stopService(proc.child, 30_000);
      const lines = proc.output
        .join("")
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { msg: string; reason?: string; hook?: string });
      assert.deepEqual(
        { exitCode: proc.child.exitCode, signal: proc.child.signalCode },
        { exitCode: 0, signal: null },
        `${name} exited by itself, with code 0`,
      );
      assert.deepEqual(
        lines.filter((line) => line.msg === "shutdown step failed").map((line) => line.hook),
        [],
        `${name}: no shutdown step failed`,
      );
      const shuttingDown = lines.findIndex((line) => line.msg === "shutting down");
      assert.equal(lines[shuttingDown]?.reason, "SIGTERM", `${name} began its shutdown on SIGTERM`);
      assert.equal(lines.at(-1)?.msg, "stopped", `${name}'s last line is its stop`);
    }
  });
});

import assert from "node:assert/strict";
import path from "node:path";
import { after, describe, it } from "node:test";
import { ThreadPool, ThreadTaskFailed } from "./thread-pool";

const THREAD = path.join(__dirname, "test-support", "sleep-thread.ts");

const failed = (reason: ThreadTaskFailed["reason"]) => (err: unknown) => err instanceof ThreadTaskFailed && err.reason === reason;

describe("ThreadPool", () => {
  const pool = new ThreadPool<number, number>({ file: THREAD, threads: 1 });
  after(() => pool.close());

  it("answers each task on its thread, one at a time", async () => {
    assert.deepEqual(await Promise.all([pool.run(5, 5_000), pool.run(6, 5_000)]), [5, 6]);
  });

  it("times a task from when its thread takes it: the wait behind another does not count", async () => {
    const first = pool.run(600, 5_000);
    const second = pool.run(10, 400);
    assert.deepEqual(await Promise.all([first, second]), [600, 10]);
  });

  it("with waitCounts, the wait counts: a task still queued at its deadline leaves the queue and fails, and the busy thread is kept", async () => {
    const first = pool.run(600, 5_000);
    const second = pool.run(10, 200, { waitCounts: true });
    await assert.rejects(second, failed("timeout"));
    assert.equal(await first, 600, "the task that held the thread was not stopped for the one that waited");
    assert.equal(await pool.run(1, 5_000), 1);
  });

  it("terminates a thread whose task overruns its time, and serves the next task on a new one", async () => {
    await assert.rejects(pool.run(10_000, 300), failed("timeout"));
    assert.equal(await pool.run(2, 5_000), 2);
  });

  it("refuses a task past the queue's bound", async () => {
    const small = new ThreadPool<number, number>({ file: THREAD, threads: 1, maxQueued: 1 });
    try {
      const running = small.run(300, 10_000);
      while (small.running === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const queued = small.run(1, 5_000);
      await assert.rejects(small.run(1, 5_000), failed("queue_full"));
      assert.deepEqual(await Promise.all([running, queued]), [300, 1]);
    } finally {
      await small.close();
    }
  });
});

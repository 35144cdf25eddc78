import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FifoSemaphore } from "./fifo";

describe("FifoSemaphore", () => {
  it("serves waiters in arrival order and skips aborted ones", async () => {
    const sem = new FifoSemaphore(1);
    const order: string[] = [];
    const first = await sem.acquire();
    const controller = new AbortController();
    const b = sem.acquire().then((release) => {
      order.push("b");
      release();
    });
    const aborted = sem.acquire(controller.signal).then(
      () => order.push("aborted"),
      () => order.push("aborted-rejected"),
    );
    const c = sem.acquire().then((release) => {
      order.push("c");
      release();
    });
    controller.abort();
    first();
    await Promise.all([b, c, aborted]);
    assert.deepEqual(order, ["aborted-rejected", "b", "c"]);
    assert.equal(sem.inUse, 0);
  });
});

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FifoSemaphore, WaiterQueue } from "./fifo";

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

describe("WaiterQueue", () => {
  it("hands values to waiters in arrival order, drops an aborted waiter and refuses one already aborted", async () => {
    const queue = new WaiterQueue<string>();
    const controller = new AbortController();
    const first = queue.wait();
    const aborted = queue.wait(controller.signal);
    const second = queue.wait();
    controller.abort(new Error("gave up"));
    await assert.rejects(aborted, /gave up/);
    await assert.rejects(queue.wait(controller.signal), /gave up/);
    assert.equal(queue.length, 2);
    assert.equal(queue.serve("a"), true);
    assert.equal(queue.serve("b"), true);
    assert.equal(queue.serve("c"), false);
    assert.deepEqual(await Promise.all([first, second]), ["a", "b"]);
  });

  it("fails every waiter at once", async () => {
    const queue = new WaiterQueue<number>();
    const waits = [queue.wait(), queue.wait()];
    queue.rejectAll(new Error("closed"));
    for (const wait of waits) await assert.rejects(wait, /closed/);
    assert.equal(queue.length, 0);
  });
});

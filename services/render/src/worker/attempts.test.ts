import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jobEvent, type StoredJobEvent } from "@pressroom/domain";
import { deathsBefore, type AttemptEnd } from "./attempts";

const ids = { jobId: "job_1", keyId: "key_1" };
const history = (...attempts: number[]): StoredJobEvent[] => [
  { seq: 1, writer: "gateway", event: jobEvent("job.accepted", { ...ids, source: "gateway", accepted: {} }) },
  ...attempts.map((attempt, i) => ({
    seq: i + 2,
    writer: "render",
    event: jobEvent("job.started", { ...ids, source: "render", started: { worker: "w", attempt } }),
  })),
];
const ends = (entries: [number, AttemptEnd][]) => new Map(entries);

describe("a job's deaths before an attempt", () => {
  it("counts the browser's deaths written by the worker that saw them", () => {
    assert.equal(deathsBefore(2, history(1), ends([[1, "died"]])), 1);
    assert.equal(
      deathsBefore(
        3,
        history(1, 2),
        ends([
          [1, "died"],
          [2, "died"],
        ]),
      ),
      2,
    );
  });

  it("counts an attempt that began and wrote no end as its worker's death", () => {
    assert.equal(deathsBefore(2, history(1), ends([])), 1);
    assert.equal(deathsBefore(3, history(1, 2), ends([[2, "died"]])), 2);
  });

  it("never counts an attempt tried again for another reason, one that never began, or the attempt itself", () => {
    assert.equal(
      deathsBefore(
        3,
        history(1, 2),
        ends([
          [1, "retried"],
          [2, "retried"],
        ]),
      ),
      0,
    );
    assert.equal(deathsBefore(3, history(2), ends([[2, "retried"]])), 0, "attempt 1 never began (its delivery failed before the job started)");
    assert.equal(deathsBefore(1, history(1), ends([])), 0);
    assert.equal(deathsBefore(2, history(1, 2), ends([[1, "retried"]])), 0);
  });
});

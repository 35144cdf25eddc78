import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { backoffCeilingMs, nextStep, parseRetryAfter, retryDelayMs, type RetryPolicy } from "./schedule";

const HOUR = 3_600_000;
const PRODUCTION: RetryPolicy = { baseMs: 5_000, capMs: 4 * HOUR, windowMs: 24 * HOUR };

describe("retry schedule", () => {
  it("draws the first retry from [0, 5 s) and doubles the range after each attempt, up to the cap", () => {
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => backoffCeilingMs(PRODUCTION, n)),
      [5_000, 10_000, 20_000, 40_000],
    );
    assert.equal(backoffCeilingMs(PRODUCTION, 30), 4 * HOUR);
    assert.equal(backoffCeilingMs(PRODUCTION, 10_000), 4 * HOUR);
    assert.equal(
      retryDelayMs(PRODUCTION, 1, () => 0),
      0,
    );
    assert.equal(
      retryDelayMs(PRODUCTION, 1, () => 0.999_999),
      4_999,
    );
    for (let i = 0; i < 1_000; i++) {
      const delay = retryDelayMs(PRODUCTION, 3);
      assert.ok(delay >= 0 && delay < 20_000);
    }
  });

  it("reads Retry-After as seconds or an HTTP date, and ignores anything else", () => {
    const now = Date.parse("2026-11-21T12:00:00Z");
    assert.equal(parseRetryAfter("120", now), 120_000);
    assert.equal(parseRetryAfter(" 0 ", now), 0);
    assert.equal(parseRetryAfter("Sat, 21 Nov 2026 12:01:00 GMT", now), 60_000);
    assert.equal(parseRetryAfter("Sat, 21 Nov 2026 11:00:00 GMT", now), 0);
    assert.equal(parseRetryAfter(undefined, now), undefined);
    assert.equal(parseRetryAfter("-5", now), undefined);
    assert.equal(parseRetryAfter("soon", now), undefined);
    assert.equal(parseRetryAfter("1.5", now), undefined);
  });

  it("waits at least Retry-After, and stops when it reaches past the window", () => {
    const finishedAt = new Date("2026-11-21T12:00:00Z");
    const now = new Date(finishedAt.getTime() + 1_000);
    const step = nextStep(PRODUCTION, { attempt: 1, finishedAt, now, retryAfterMs: 60_000, random: () => 0.5 });
    assert.deepEqual(step, { kind: "retry", at: new Date(now.getTime() + 60_000) });
    const jitterWins = nextStep(PRODUCTION, { attempt: 1, finishedAt, now, retryAfterMs: 1_000, random: () => 0.5 });
    assert.deepEqual(jitterWins, { kind: "retry", at: new Date(now.getTime() + 2_500) });
    const tooLate = nextStep(PRODUCTION, { attempt: 1, finishedAt, now, retryAfterMs: 25 * HOUR });
    assert.equal(tooLate.kind, "exhausted");
  });

  it("makes the last attempt at the end of the window, then stops", () => {
    const finishedAt = new Date("2026-11-21T12:00:00Z");
    const nearEnd = new Date(finishedAt.getTime() + 24 * HOUR - 60_000);
    const step = nextStep(PRODUCTION, { attempt: 20, finishedAt, now: nearEnd, random: () => 0.99 });
    assert.deepEqual(step, { kind: "retry", at: new Date(finishedAt.getTime() + 24 * HOUR) });
    const atEnd = nextStep(PRODUCTION, { attempt: 21, finishedAt, now: new Date(finishedAt.getTime() + 24 * HOUR) });
    assert.equal(atEnd.kind, "exhausted");
  });

  it("spreads the attempts of a receiver that never answers over about 24 hours", () => {
    for (const random of [() => 0.5, Math.random, () => 0.999]) {
      const finishedAt = new Date(0);
      let now = new Date(0);
      let attempt = 1;
      const times: number[] = [0];
      for (;;) {
        const step = nextStep(PRODUCTION, { attempt, finishedAt, now, random });
        if (step.kind === "exhausted") break;
        now = step.at;
        times.push(now.getTime());
        attempt++;
      }
      assert.ok(times[1]! < 5_000, "the first retry comes within 5 s");
      assert.equal(times.at(-1), 24 * HOUR, "the last attempt is at the end of the window");
      assert.ok(attempt >= 12 && attempt <= 60, `${attempt} attempts`);
    }
  });
});

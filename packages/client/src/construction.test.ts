import assert from "node:assert/strict";
import { inspect } from "node:util";
import { describe, it } from "node:test";
import { Pressroom, PressroomClient } from "./index";
import { parseRetryAfter } from "./http";

const API_KEY = "pr_test_key_0123456789";

describe("Pressroom constructor", () => {
  it("requires an apiKey", () => {
    const Loose = Pressroom as unknown as new (options?: unknown) => Pressroom;
    assert.throws(() => new Loose({}), /apiKey is required/);
    assert.throws(() => new Loose(), /apiKey is required/);
    assert.throws(() => new Pressroom({ apiKey: "" }), /apiKey is required/);
  });

  it("defaults baseUrl to http://localhost:8080 and drops trailing slashes", () => {
    assert.equal(new Pressroom({ apiKey: API_KEY }).baseUrl, "http://localhost:8080");
    assert.equal(new Pressroom({ apiKey: API_KEY, baseUrl: "https://api.example.com/" }).baseUrl, "https://api.example.com");
    assert.throws(() => new Pressroom({ apiKey: API_KEY, baseUrl: "not a url" }), TypeError);
    assert.throws(() => new Pressroom({ apiKey: API_KEY, timeoutMs: 0 }), TypeError);
  });

  it("is also exported as PressroomClient", () => {
    assert.equal(PressroomClient, Pressroom);
  });

  it("never reveals the API key when logged or serialized", () => {
    const client = new Pressroom({ apiKey: API_KEY });
    assert.ok(!JSON.stringify(client).includes(API_KEY));
    assert.ok(!inspect(client, { showHidden: true, depth: 5 }).includes(API_KEY));
  });
});

describe("parseRetryAfter", () => {
  it("reads delta-seconds and HTTP-dates", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    assert.equal(parseRetryAfter("120", now), 120);
    assert.equal(parseRetryAfter(" 5 ", now), 5);
    assert.equal(parseRetryAfter("Thu, 01 Jan 2026 00:00:30 GMT", now), 30);
    assert.equal(parseRetryAfter("Wed, 31 Dec 2025 23:00:00 GMT", now), 0);
    assert.equal(parseRetryAfter("soon", now), undefined);
    assert.equal(parseRetryAfter(null, now), undefined);
  });
});

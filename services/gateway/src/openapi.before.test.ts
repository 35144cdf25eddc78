import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { openApiDocument } from "./openapi/document";

/**
 * The served OpenAPI document compared, field by field, with the one served
 * before it was generated from the routes' zod schemas (openapi.before.json,
 * saved from the hand-written document). Every place where the two may differ
 * is listed here with its reason; anything else that differs fails.
 */
const INTENDED_DIFFERENCES: Record<string, string> = {};

type Json = unknown;

/** The JSON pointers (RFC 6901) where `actual` and `expected` differ: a value, a missing or an extra key. */
function differences(actual: Json, expected: Json, pointer = ""): string[] {
  if (typeof actual !== "object" || typeof expected !== "object" || actual === null || expected === null) {
    return Object.is(actual, expected) ? [] : [pointer];
  }
  if (Array.isArray(actual) !== Array.isArray(expected)) return [pointer];
  const a = actual as Record<string, Json>;
  const e = expected as Record<string, Json>;
  const keys = [...new Set([...Object.keys(e), ...Object.keys(a)])];
  return keys.flatMap((key) => {
    const child = `${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
    if (!(key in a) || !(key in e)) return [child];
    return differences(a[key], e[key], child);
  });
}

const before = JSON.parse(readFileSync(new URL("./openapi.before.json", import.meta.url), "utf8")) as Record<string, Record<string, unknown>>;
const now = JSON.parse(JSON.stringify(openApiDocument)) as Record<string, Record<string, unknown>>;
const intended = (pointer: string) => Object.keys(INTENDED_DIFFERENCES).find((allowed) => pointer === allowed || pointer.startsWith(`${allowed}/`));

describe("the served OpenAPI document, compared with the one served before", () => {
  it("differs only where a difference is intended", () => {
    const unintended = differences(now, before).filter((pointer) => !intended(pointer));
    assert.deepEqual(unintended, []);
  });

  it("lists no intended difference that is not one", () => {
    const found = new Set(differences(now, before).map(intended));
    assert.deepEqual(
      Object.keys(INTENDED_DIFFERENCES).filter((allowed) => !found.has(allowed)),
      [],
    );
  });

  it("keeps the order of the paths and the schemas (GET /docs shows them in this order)", () => {
    assert.deepEqual(Object.keys(now.paths!), Object.keys(before.paths!));
    assert.deepEqual(Object.keys((now.components as Record<string, object>).schemas!), Object.keys((before.components as Record<string, object>).schemas!));
  });
});

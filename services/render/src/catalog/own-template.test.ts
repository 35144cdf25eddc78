import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileProblem, sourceDigest } from "./own-template";

describe("an own template's source", () => {
  it("compiles, or names the line and column where it does not", () => {
    assert.equal(compileProblem("<p>{{#each items}}{{this}}{{/each}}</p>"), undefined);
    assert.match(compileProblem("<p>\n  {{#if a}} x {{/each}}\n</p>")!, /^does not compile at line 2, column 6: if doesn't match each$/);
    assert.match(compileProblem("<p>\nabc {{foo</p>")!, /^does not compile at line 2, column 7: Expecting /);
    assert.match(compileProblem("ok\n\n  {{/if}}")!, /^does not compile at line 3, column 3: /);
  });

  it("is recorded by its SHA-256 only", () => {
    assert.equal(sourceDigest("<p>x</p>"), "31d8e07ec305ac4e2515d1f0b1c8c603b3858044eb7d97807d6d0970838cb0be");
    assert.notEqual(sourceDigest("<p>x</p>"), sourceDigest("<p>y</p>"));
  });
});

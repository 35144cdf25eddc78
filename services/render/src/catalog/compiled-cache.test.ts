import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { BUILTIN_DIR } from "./builtin-loader";
import { CompiledCache } from "./compiled-cache";
import { compileTemplate } from "./handlebars";

const roomy = { maxBytes: 1024 * 1024, maxEntries: 100 };
const invoice = readFileSync(path.join(BUILTIN_DIR, "invoice", "template.hbs"), "utf8");

/** Runs `f` with the stack all but used up, moving one frame up at a time until `reached()`; what `f` threw there. */
function thrownNearStackEnd(f: () => unknown, reached: () => boolean): unknown {
  let thrown: unknown;
  const dive = (): void => {
    try {
      dive();
    } catch {
      if (reached()) return;
      try {
        f();
      } catch (err) {
        thrown = err;
      }
    }
  };
  dive();
  return thrown;
}

/** The API key whose sources most cases keep. */
const KEY = "key_a";

/** Looks up each source in turn, as KEY's. */
function use(cache: CompiledCache, ...sources: string[]): void {
  for (const source of sources) cache.get(source, KEY);
}

describe("compiled templates kept by their source's hash", () => {
  it("compiles a source once, and fills it with each render's own data", () => {
    const cache = new CompiledCache(compileTemplate, roomy);
    const first = cache.get(invoice, KEY)({ number: "INV-1", customer: { name: "Ada" } });
    const second = cache.get(invoice, KEY)({ number: "INV-2", customer: { name: "Bob" } });
    assert.deepEqual(cache.stats(), { hits: 1, compiles: 1, entries: 1, bytes: Buffer.byteLength(invoice) });
    assert.match(first, /INV-1/);
    assert.match(first, /Ada/);
    assert.doesNotMatch(first, /INV-2|Bob/);
    assert.match(second, /INV-2/);
    assert.match(second, /Bob/);
    assert.doesNotMatch(second, /INV-1|Ada/);
  });

  it("carries nothing of a render into the next, not even of one that failed inside an inline partial", () => {
    const cache = new CompiledCache(compileTemplate, roomy);
    const source = '{{#*inline "line"}}<p>{{name}}</p>{{/inline}}{{#each rows}}{{> line}}{{#if fail}}{{missing 1}}{{/if}}{{/each}}';
    assert.throws(() => cache.get(source, KEY)({ rows: [{ name: "secret of A", fail: true }] }), /Missing helper: "missing"/);
    assert.equal(cache.get(source, KEY)({ rows: [{ name: "B" }] }), "<p>B</p>");
    assert.equal(cache.get(source, KEY)({}), "");
    assert.equal(cache.stats().compiles, 1);
  });

  it("never shares a template between different sources, one space apart or one byte of UTF-8", () => {
    const cache = new CompiledCache(compileTemplate, roomy);
    const data = { a: "A", b: "B" };
    const outputs = ["<p>{{a}}</p>", "<p>{{a}} </p>", "<p>{{b}}</p>", "<p>{{b}}é</p>", "<p>{{b}}e</p>"].map((source) => cache.get(source, KEY)(data));
    assert.deepEqual(outputs, ["<p>A</p>", "<p>A </p>", "<p>B</p>", "<p>Bé</p>", "<p>Be</p>"]);
    assert.deepEqual(cache.stats(), { hits: 0, compiles: 5, entries: 5, bytes: 12 + 13 + 12 + 14 + 13 });
  });

  it("never shares a template between keys: another key's same source compiles anew", () => {
    const cache = new CompiledCache(compileTemplate, roomy);
    assert.equal(cache.get("<p>{{a}}</p>", KEY)({ a: "A" }), "<p>A</p>");
    assert.equal(cache.get("<p>{{a}}</p>", "key_b")({ a: "B" }), "<p>B</p>");
    assert.deepEqual(cache.stats(), { hits: 0, compiles: 2, entries: 2, bytes: 24 });
    cache.get("<p>{{a}}</p>", "key_b");
    assert.equal(cache.stats().hits, 1, "each key hits its own");
  });

  it("evicts the least recently used past its entry limit", () => {
    const cache = new CompiledCache(compileTemplate, { maxBytes: 1024, maxEntries: 2 });
    use(cache, "a", "b", "a", "c"); // c evicts b, used less recently than a
    assert.deepEqual(cache.stats(), { hits: 1, compiles: 3, entries: 2, bytes: 2 });
    cache.get("a", KEY);
    assert.equal(cache.stats().hits, 2, "a is still kept");
    cache.get("b", KEY);
    assert.equal(cache.stats().compiles, 4, "b was evicted");
    cache.get("a", KEY);
    assert.equal(cache.stats().hits, 3, "b evicted c, not a");
  });

  it("evicts the least recently used past its byte limit, and keeps no source larger than the limit", () => {
    const cache = new CompiledCache(compileTemplate, { maxBytes: 10, maxEntries: 100 });
    use(cache, "1111", "2222", "1111", "333"); // 11 bytes: 333 evicts 2222
    assert.deepEqual(cache.stats(), { hits: 1, compiles: 3, entries: 2, bytes: 7 });
    assert.equal(cache.get("x".repeat(11), KEY)({}), "x".repeat(11));
    assert.deepEqual(cache.stats(), { hits: 1, compiles: 4, entries: 2, bytes: 7 });
    use(cache, "1111", "333");
    assert.equal(cache.stats().hits, 3);
  });

  it("keeps a source that does not compile as its failure: the same error again, without compiling again", () => {
    const cache = new CompiledCache(compileTemplate, roomy);
    const broken = "<p>{{#each items}}{{name}</p>";
    const errors = [0, 1].map(() => {
      const template = cache.get(broken, KEY);
      try {
        template({ items: [] });
      } catch (err) {
        return err as Error;
      }
      return assert.fail("a source that does not compile rendered");
    });
    assert.throws(() => compileTemplate(broken), /^Error: Parse error on line 1/, "compiled when asked, not when first filled");
    assert.match(errors[0]!.message, /^Parse error on line 1/);
    assert.equal(errors[1], errors[0], "the kept error, not a second compile's");
    assert.deepEqual(cache.stats(), { hits: 1, compiles: 1, entries: 1, bytes: Buffer.byteLength(broken) });
  });

  it("keeps no stack overflow: the same source compiles where the stack has room", () => {
    const cache = new CompiledCache(compileTemplate, roomy);
    const nested = "{{#if a}}".repeat(200) + "x" + "{{/if}}".repeat(200);
    const thrown = thrownNearStackEnd(
      () => cache.get(nested, KEY),
      () => cache.stats().compiles > 0,
    );
    assert.ok(thrown instanceof RangeError, `near the end of the stack: ${String(thrown)}`);
    assert.deepEqual(cache.stats(), { hits: 0, compiles: 1, entries: 0, bytes: 0 });
    assert.equal(cache.get(nested, KEY)({ a: 1 }), "x");
    assert.deepEqual(cache.stats(), { hits: 0, compiles: 2, entries: 1, bytes: nested.length });
  });
});

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { renderV1 } from "@pressroom/contracts";
import { AppError } from "@pressroom/platform";
import { ajv } from "./ajv";
import { CustomerSchemas } from "./schemas";

/**
 * Customers' data schemas (issue 39): linear-time patterns, refused at save when they break the
 * schema budget's rules (naming the keyword), run on threads of their own within the time
 * budget, and never accumulating in a validator's registry.
 */

const own = (id: string, schema: object, version = 1) =>
  renderV1.Template.fromPartial({ id, owner: "key-a", generation: 1, version, dataSchemaJson: JSON.stringify(schema) });

/** Ajv's registry and the values its compiled code keeps, by kind: what grows with every schema an instance compiles. */
function registry(): string {
  const internals = ajv as unknown as { _cache: Map<unknown, unknown>; scope: { _values: Record<string, Set<unknown>> } };
  const values = Object.entries(internals.scope._values).map(([kind, set]) => `${kind}:${set.size}`);
  return JSON.stringify([Object.keys(ajv.schemas).length, Object.keys(ajv.refs).length, internals._cache.size, values]);
}

describe("customers' data schemas", () => {
  const schemas = new CustomerSchemas({ threads: 1 });
  after(() => schemas.close());

  it("answers the exponential-backtracking pattern at once: 33 a's and a '!' (37 s on V8's engine), and 10,000", async () => {
    const template = own("redos", { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } });
    for (const length of [33, 10_000]) {
      const problem = await schemas.validate(template, { s: `${"a".repeat(length)}!` });
      assert.ok(problem instanceof AppError);
      assert.equal(problem.code, "PAYLOAD_INVALID");
      assert.match(problem.message, /^data\.s: must match pattern/);
    }
    assert.equal(await schemas.validate(template, { s: "aaaa" }), undefined);
  });

  it("refuses at save, naming the keyword, a schema that breaks the budget's rules", async () => {
    const deep = (levels: number): object => (levels === 0 ? { type: "string" } : { type: "object", properties: { x: deep(levels - 1) } });
    const cases: [string, object, RegExp][] = [
      [
        "a backreference",
        { properties: { s: { pattern: "^(a)\\1$" } } },
        /^data_schema\.properties\.s\.pattern: "\^\(a\)\\1\$" is not a pattern a linear-time engine can run/,
      ],
      ["lookahead", { patternProperties: { "^(?=a)": {} } }, /^data_schema\.patternProperties: .*no backreferences or lookaround/],
      ["uniqueItems with no bound", { type: "array", uniqueItems: true }, /^data_schema\.uniqueItems: needs a maxItems of at most 1,000/],
      ["uniqueItems over 1,000", { type: "array", uniqueItems: true, maxItems: 5_000 }, /^data_schema\.uniqueItems: /],
      ["a huge enum", { enum: Array.from({ length: 1_001 }, (_, i) => i) }, /^data_schema\.enum: has 1001 values, more than 1,000/],
      ["deep nesting", deep(40), /^data_schema(\.properties\.x)+ \(properties\): nests subschemas deeper than 32 levels/],
      ["a $ref loop", { $defs: { a: { $ref: "#/$defs/b" }, b: { allOf: [{ $ref: "#/$defs/a" }] } }, $ref: "#/$defs/a" }, /\.\$ref: loops back to itself/],
      ["a $ref to itself", { anyOf: [{ type: "string" }, { $ref: "#" }] }, /^data_schema\.anyOf\.1\.\$ref: loops back to itself/],
      ["a remote $ref", { $ref: "https://example.com/schema.json" }, /^data_schema\.\$ref: .*not a reference inside the schema/],
      ["$dynamicRef", { $dynamicRef: "#meta" }, /^data_schema\.\$dynamicRef: is not supported/],
      ["a nested $id", { properties: { a: { $id: "https://x.example/a" } } }, /^data_schema\.properties\.a\.\$id: is allowed at the schema's root only/],
      ["another $schema", { $schema: "http://json-schema.org/draft-07/schema#" }, /^data_schema\.\$schema: must be/],
    ];
    for (const [name, schema, message] of cases) {
      const problem = await schemas.check(schema as Record<string, unknown>, {});
      assert.ok(problem instanceof AppError, name);
      assert.equal(problem.code, "PAYLOAD_INVALID", name);
      assert.match(problem.message, message, name);
    }
  });

  it("takes what the rules allow: recursive schemas that descend into the data, bounded uniqueItems, local references", async () => {
    const tree = { $defs: { node: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/node" } } } } }, $ref: "#/$defs/node" };
    assert.equal(await schemas.check(tree, { children: [{ children: [] }] }), undefined);
    const tags = { type: "object", properties: { tags: { type: "array", uniqueItems: true, maxItems: 100 } } };
    assert.equal(await schemas.check(tags, { tags: ["a", "b"] }), undefined);
    const sample = await schemas.check({ type: "object", required: ["name"] }, {});
    assert.ok(sample instanceof AppError);
    assert.match(sample.message, /^sample_data: must have required property 'name'/);
  });

  it("keeps at most 256 compiled schemas per thread, and the gateway's own validator compiles none of them", async () => {
    const before = registry();
    for (let i = 0; i < 300; i++) {
      const schema = { $id: `https://schemas.example/${i}`, type: "object", properties: { s: { type: "string", pattern: `^a${i}$` } } };
      assert.equal(await schemas.check(schema, {}), undefined);
      assert.ok(await schemas.validate(own(`t${i}`, schema), { s: "b" }));
    }
    assert.equal(await schemas.kept(), 256);
    assert.equal(registry(), before, "the public catalog's validator did not grow");
  });

  it("stops a check that overruns the time budget (its thread replaced), 422 naming the budget, while other checks are served", async () => {
    const pool = new CustomerSchemas({ threads: 2 });
    after(() => pool.close());
    // Every key of the data against every pattern: within the rules, but its cost is keys × patterns.
    const patterns = Object.fromEntries(Array.from({ length: 1_500 }, (_, i) => [`^k${i}x$`, { type: "string" }]));
    const slow = own("slow", { type: "object", patternProperties: patterns });
    const data = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, "v"]));
    const overrun = pool.validate(slow, data);
    const small = own("small", { type: "object", required: ["n"] });
    const served = await Promise.all(Array.from({ length: 20 }, (_, i) => pool.validate(small, { n: i })));
    assert.deepEqual(served, Array(20).fill(undefined), "the other thread served them meanwhile");
    const problem = await overrun;
    assert.ok(problem instanceof AppError);
    assert.match(problem.message, /^data: checking it against the data_schema of template "slow" took longer than 1000 ms \(the schema time budget\)$/);
    assert.equal(await pool.validate(small, { n: 1 }), undefined, "the replaced thread serves");
  });
});

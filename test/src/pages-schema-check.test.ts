import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Ajv2020 } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { loadBuiltinTemplates } from "../../services/render/src/catalog/builtin-loader";

/**
 * The template pages check edited data in the browser with a small
 * validator (services/gateway/src/gallery/assets/schema-check.mjs) before
 * sending it. It must agree with the gateway's own check (ajv, draft
 * 2020-12, with formats) on every template of the catalog: never refuse
 * data the API takes, never pass data the API refuses.
 */

type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; required?: string[]; items?: Schema; type?: string | string[] };
type Json = Record<string, unknown>;

interface Case {
  name: string;
  data: unknown;
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** The data with the value at path replaced (or removed when value is undefined). */
function withValue(data: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = clone(data);
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Json)[key], copy) as Json;
  const last = path.at(-1)!;
  if (value === undefined) delete parent[last];
  else parent[last] = value;
  return copy;
}

/** Ways to break each field the sample data (root) has, following the schema; sample is the value at path at. */
function cases(schema: Schema, root: unknown, sample: unknown, at: (string | number)[] = []): Case[] {
  const found: Case[] = [];
  const here = at.join(".") || "data";
  const add = (name: string, value: unknown) => found.push({ name: `${here}: ${name}`, data: withValue(root, at, value) });
  const types = ([] as string[]).concat(schema.type ?? []);
  if (at.length > 0) {
    if (types.includes("string")) add("a number instead of a string", 12345);
    if (types.includes("number") || types.includes("integer")) add("a string instead of a number", "12");
    if (typeof schema.maxLength === "number") add("one character too long", "x".repeat(schema.maxLength + 1));
    if (typeof schema.minLength === "number" && schema.minLength > 0) add("too short", "");
    if (typeof schema.pattern === "string") add("not matching the pattern", "!?");
    if (schema.format === "date") for (const text of ["2026-02-29", "2024-02-29", "2026-13-01", "21/11/2026"]) add(`the date ${text}`, text);
    if (typeof schema.minimum === "number") add("below the minimum", schema.minimum - 1);
    if (typeof schema.maximum === "number") add("above the maximum", schema.maximum + 1);
    if (Array.isArray(schema.enum)) add("not one of the options", "not-an-option");
    if (types.includes("integer")) add("a fraction", 1.5);
  }
  if (sample && typeof sample === "object" && !Array.isArray(sample) && schema.properties) {
    for (const name of schema.required ?? []) found.push({ name: `${here}.${name}: missing`, data: withValue(root, [...at, name], undefined) });
    found.push({ name: `${here}: an unknown field`, data: withValue(root, [...at, "surprise_field"], "x") });
    for (const [name, value] of Object.entries(sample)) if (schema.properties[name]) found.push(...cases(schema.properties[name], root, value, [...at, name]));
  }
  if (Array.isArray(sample) && schema.items) {
    if (typeof schema.maxItems === "number")
      add(
        "too many items",
        Array.from({ length: schema.maxItems + 1 }, () => sample[0] ?? null),
      );
    if (typeof schema.minItems === "number" && schema.minItems > 0) add("too few items", []);
    if (sample.length > 0) found.push(...cases(schema.items, root, sample[0], [...at, 0]));
  }
  return found;
}

describe("the template pages' schema check agrees with the gateway's", () => {
  // An ES module (browsers load it as it is); this suite is CommonJS.
  let validate: typeof import("../../services/gateway/src/gallery/assets/schema-check.mjs", { with: { "resolution-mode": "import" } }).validate;
  before(async () => {
    ({ validate } = await import("../../services/gateway/src/gallery/assets/schema-check.mjs"));
  });
  const ajv = new Ajv2020({ allErrors: false, strict: false });
  addFormats(ajv);

  for (const template of loadBuiltinTemplates()) {
    it(`${template.id}: the sample data and every way to break each of its fields`, () => {
      const check = ajv.compile(template.dataSchema);
      const all: Case[] = [
        { name: "the sample data", data: template.sampleData },
        ...cases(template.dataSchema as Schema, template.sampleData, template.sampleData),
      ];
      assert.ok(all.length > 10, `${all.length} cases`);
      for (const { name, data } of all) {
        const gateway = check(data);
        const problems = validate(template.dataSchema, data);
        assert.equal(
          problems.length === 0,
          gateway,
          `${template.id}, ${name}: the gateway says ${gateway ? "valid" : `invalid (${ajv.errorsText(check.errors)})`}, the page says ${JSON.stringify(problems)}`,
        );
      }
    });
  }

  it("names the field and the rule, the way the API does", () => {
    const schema = {
      type: "object",
      required: ["n"],
      additionalProperties: false,
      properties: {
        n: { type: "string", maxLength: 3 },
        items: { type: "array", items: { type: "object", properties: { q: { type: "number", minimum: 0 } } } },
      },
    };
    assert.deepEqual(validate(schema, { n: "long", items: [{ q: -1 }], x: 1 }), [
      { path: "data.n", message: "must be at most 3 characters" },
      { path: "data.items.0.q", message: "must be at least 0" },
      { path: "data.x", message: "is not allowed by the template" },
    ]);
    assert.deepEqual(validate(schema, {}), [{ path: "data.n", message: "is required" }]);
    assert.deepEqual(validate(schema, []), [{ path: "data", message: "must be an object" }]);
  });
});

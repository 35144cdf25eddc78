/**
 * The part of JSON Schema (draft 2020-12) the catalog's data schemas use:
 * type, enum, required, properties, additionalProperties, items, anyOf,
 * min/maxLength, pattern, format "date", minimum/maximum, min/maxItems.
 * Returns every problem as { path, message }, the path written the way the
 * API names fields ("data.items.0.quantity").
 */

/** A full-date of RFC 3339: the pattern, and a day that exists in its month. */
function isDate(text) {
  const time = Date.parse(`${text}T00:00:00Z`);
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(time) && new Date(time).toISOString().startsWith(text);
}

function typeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function hasType(value, type) {
  const actual = typeOf(value);
  return actual === type || (type === "number" && actual === "integer");
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

function check(schema, value, path, problems) {
  if (!schema || typeof schema !== "object") return;
  const fail = (message) => problems.push({ path, message });
  if (schema.type !== undefined) {
    const types = [].concat(schema.type);
    if (!types.some((type) => hasType(value, type)))
      return fail(`must be ${types.map((t) => (t === "integer" ? "an integer" : t === "array" || t === "object" ? `an ${t}` : `a ${t}`)).join(" or ")}`);
  }
  if (schema.enum && !schema.enum.some((option) => JSON.stringify(option) === JSON.stringify(value)))
    fail(`must be one of ${schema.enum.map((o) => JSON.stringify(o)).join(", ")}`);
  if (schema.anyOf && !schema.anyOf.some((option) => validate(option, value).length === 0)) fail("matches none of the allowed shapes");
  if (typeof value === "string") {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength)
      fail(schema.minLength === 1 ? "must not be empty" : `must be at least ${plural(schema.minLength, "character")}`);
    if (schema.maxLength !== undefined && length > schema.maxLength) fail(`must be at most ${plural(schema.maxLength, "character")}`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(value)) fail(`must match ${schema.pattern}`);
    if (schema.format === "date" && !isDate(value)) fail("must be a date (YYYY-MM-DD)");
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) fail(`must be at least ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) fail(`must be at most ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) fail(`must have at least ${plural(schema.minItems, "item")}`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) fail(`must have at most ${plural(schema.maxItems, "item")}`);
    if (schema.items) value.forEach((item, i) => check(schema.items, item, `${path}.${i}`, problems));
  }
  if (typeOf(value) === "object") {
    for (const name of schema.required ?? []) if (!(name in value)) problems.push({ path: `${path}.${name}`, message: "is required" });
    const properties = schema.properties ?? {};
    for (const [name, item] of Object.entries(value)) {
      if (name in properties) check(properties[name], item, `${path}.${name}`, problems);
      else if (schema.additionalProperties === false) problems.push({ path: `${path}.${name}`, message: "is not allowed by the template" });
      else if (typeof schema.additionalProperties === "object") check(schema.additionalProperties, item, `${path}.${name}`, problems);
    }
  }
}

/** Every way value breaks schema; empty when it conforms. */
export function validate(schema, value, path = "data") {
  const problems = [];
  check(schema, value, path, problems);
  return problems;
}

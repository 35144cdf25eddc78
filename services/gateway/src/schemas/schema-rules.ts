import { re2RegExp } from "./ajv";

/**
 * What a customer's data_schema may use, so that checking any data against it stays within the
 * schema time budget: each rule refuses a keyword whose cost grows faster than the data, or that
 * the checks below cannot follow. Read before the schema is compiled, by a loop (no recursion:
 * a deep schema cannot exhaust the stack here).
 */
export const SCHEMA_LIMITS = {
  /** Subschemas nested deeper than this. */
  depth: 32,
  /** Values of one enum. */
  enumValues: 1_000,
  /** uniqueItems compares every pair of items: it needs a maxItems of at most this. */
  uniqueItems: 1_000,
};

/** Where a schema breaks a rule: the keyword, its JSON pointer in the schema, and why. */
export interface SchemaProblem {
  keyword: string;
  pointer: string;
  message: string;
}

const ONE = ["additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties"];
const MANY = ["allOf", "anyOf", "oneOf", "prefixItems"];
const NAMED = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/** Keywords whose subschemas apply to the same value (not to a part of it): a loop through them never ends. */
const IN_PLACE = new Set(["allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas"]);
const META = "https://json-schema.org/draft/2020-12/schema";

interface Node {
  schema: Record<string, unknown>;
  pointer: string;
  depth: number;
  /** The keyword that holds it ("" for the root). */
  keyword: string;
}

const escape = (token: string) => token.replace(/~/g, "~0").replace(/\//g, "~1");
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function patternProblem(pattern: unknown): string | undefined {
  if (typeof pattern !== "string") return undefined;
  try {
    re2RegExp(pattern);
    return undefined;
  } catch (err) {
    return `"${pattern}" is not a pattern a linear-time engine can run (${(err as Error).message}): no backreferences or lookaround`;
  }
}

/** The subschemas of one schema, each with the keyword that holds it and whether it applies to the same value. */
function children(node: Node): { child: Node; inPlace: boolean }[] {
  const out: { child: Node; inPlace: boolean }[] = [];
  const add = (value: unknown, keyword: string, pointer: string) => {
    if (isObject(value)) out.push({ child: { schema: value, pointer, depth: node.depth + 1, keyword }, inPlace: IN_PLACE.has(keyword) });
  };
  const { schema, pointer } = node;
  for (const keyword of ONE) add(schema[keyword], keyword, `${pointer}/${keyword}`);
  for (const keyword of MANY) {
    const list = schema[keyword];
    if (Array.isArray(list)) list.forEach((value, i) => add(value, keyword, `${pointer}/${keyword}/${i}`));
  }
  for (const keyword of NAMED) {
    const named = schema[keyword];
    if (isObject(named)) for (const [name, value] of Object.entries(named)) add(value, keyword, `${pointer}/${keyword}/${escape(name)}`);
  }
  const items = schema.items;
  if (Array.isArray(items)) items.forEach((value, i) => add(value, "items", `${pointer}/items/${i}`));
  else add(items, "items", `${pointer}/items`);
  return out;
}

/** What one schema's own keywords break, apart from its subschemas. */
function ownProblem(node: Node): SchemaProblem | undefined {
  const { schema, pointer, depth } = node;
  const at = (keyword: string, message: string): SchemaProblem => ({ keyword, pointer: `${pointer}/${keyword}`, message });
  if (depth > SCHEMA_LIMITS.depth) return { keyword: node.keyword, pointer, message: `nests subschemas deeper than ${SCHEMA_LIMITS.depth} levels` };
  const pattern = patternProblem(schema.pattern);
  if (pattern) return at("pattern", pattern);
  if (isObject(schema.patternProperties)) {
    for (const key of Object.keys(schema.patternProperties)) {
      const problem = patternProblem(key);
      if (problem) return at("patternProperties", problem);
    }
  }
  if (Array.isArray(schema.enum) && schema.enum.length > SCHEMA_LIMITS.enumValues)
    return at("enum", `has ${schema.enum.length} values, more than ${SCHEMA_LIMITS.enumValues.toLocaleString("en-US")}`);
  if (schema.uniqueItems === true && !(typeof schema.maxItems === "number" && schema.maxItems <= SCHEMA_LIMITS.uniqueItems))
    return at("uniqueItems", `needs a maxItems of at most ${SCHEMA_LIMITS.uniqueItems.toLocaleString("en-US")} beside it (it compares every pair of items)`);
  if (typeof schema.$ref === "string" && !schema.$ref.startsWith("#")) return at("$ref", `"${schema.$ref}" is not a reference inside the schema (#/…)`);
  for (const keyword of ["$dynamicRef", "$recursiveRef"]) if (keyword in schema) return at(keyword, "is not supported in a template's data_schema; use $ref");
  if (pointer !== "" && "$id" in schema) return at("$id", "is allowed at the schema's root only");
  if (pointer === "" && "$schema" in schema && schema.$schema !== META) return at("$schema", `must be "${META}" (draft 2020-12) or left out`);
  return undefined;
}

/** The schema a local $ref names ("#", "#/json/pointer" or "#anchor"), or undefined. */
function resolveRef(root: Record<string, unknown>, ref: string, anchors: Map<string, string>): string | undefined {
  if (ref === "#") return "";
  if (!ref.startsWith("#/")) return anchors.get(ref.slice(1));
  let target: unknown = root;
  let pointer = "";
  try {
    for (const token of ref.slice(2).split("/")) {
      const name = decodeURIComponent(token).replace(/~1/g, "/").replace(/~0/g, "~");
      target = isObject(target) || Array.isArray(target) ? (target as Record<string, unknown>)[name] : undefined;
      pointer += `/${escape(name)}`;
    }
  } catch {
    return undefined;
  }
  return isObject(target) ? pointer : undefined;
}

/** A loop of references and in-place keywords that never descends into the data, as the pointers it goes through. */
function refLoop(root: Record<string, unknown>, nodes: Map<string, Node>, edges: Map<string, string[]>): string[] | undefined {
  const anchors = new Map<string, string>();
  for (const [pointer, node] of nodes) if (typeof node.schema.$anchor === "string") anchors.set(node.schema.$anchor, pointer);
  for (const [pointer, node] of nodes) {
    if (typeof node.schema.$ref !== "string") continue;
    const target = resolveRef(root, node.schema.$ref, anchors);
    if (target !== undefined) edges.get(pointer)!.push(target);
  }
  const state = new Map<string, "open" | "done">();
  for (const start of nodes.keys()) {
    if (state.has(start)) continue;
    const path: string[] = [];
    const stack: { pointer: string; next: number }[] = [{ pointer: start, next: 0 }];
    state.set(start, "open");
    path.push(start);
    while (stack.length > 0) {
      const top = stack.at(-1)!;
      const out = edges.get(top.pointer) ?? [];
      if (top.next >= out.length) {
        state.set(top.pointer, "done");
        stack.pop();
        path.pop();
        continue;
      }
      const to = out[top.next++]!;
      if (state.get(to) === "open") return [...path.slice(path.indexOf(to)), to];
      if (!state.has(to) && nodes.has(to)) {
        state.set(to, "open");
        path.push(to);
        stack.push({ pointer: to, next: 0 });
      }
    }
  }
  return undefined;
}

/** The first rule `schema` breaks, or undefined when checking data against it stays within the budget. */
export function schemaBudgetProblem(schema: Record<string, unknown>): SchemaProblem | undefined {
  const nodes = new Map<string, Node>();
  const edges = new Map<string, string[]>();
  const stack: Node[] = [{ schema, pointer: "", depth: 0, keyword: "" }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    nodes.set(node.pointer, node);
    edges.set(node.pointer, []);
    const problem = ownProblem(node);
    if (problem) return problem;
    for (const { child, inPlace } of children(node)) {
      if (inPlace) edges.get(node.pointer)!.push(child.pointer);
      stack.push(child);
    }
  }
  const loop = refLoop(schema, nodes, edges);
  if (!loop) return undefined;
  const from = loop.find((pointer) => typeof nodes.get(pointer)?.schema.$ref === "string") ?? loop[0]!;
  return {
    keyword: "$ref",
    pointer: `${from}/$ref`,
    message: `loops back to itself without descending into the data (${loop.map((p) => `#${p}`).join(" → ")})`,
  };
}

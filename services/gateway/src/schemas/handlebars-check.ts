import Handlebars from "handlebars";

/**
 * The helpers a document's Handlebars source may call: Handlebars' own block helpers and lookup, and Pressroom's
 * (render registers the same, services/render/src/catalog/builtin/helpers.ts). `log` is not one: render removes it.
 */
const KNOWN_HELPERS = { money: true, date: true, add: true, multiply: true, log: false } as const;

interface HandlebarsNode {
  type?: string;
  loc?: { start: { line: number; column: number } };
  [key: string]: unknown;
}

/** The first partial (`{{> name}}`) in a parsed template, by a loop (no recursion: a deep template cannot exhaust the stack here). */
function firstPartial(body: unknown[]): HandlebarsNode | undefined {
  const stack: unknown[] = [...body].reverse();
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object") continue;
    const n = node as HandlebarsNode;
    if (n.type === "PartialStatement" || n.type === "PartialBlockStatement") return n;
    for (const key of ["inverse", "program"]) {
      const child = n[key] as { body?: unknown[] } | undefined;
      if (Array.isArray(child?.body)) stack.push(...[...child.body].reverse());
    }
  }
  return undefined;
}

/** A Handlebars error as "does not compile at line L, column C: what": where it says, else where the lexer stopped. */
function located(err: Error & { lineNumber?: number; column?: number }): string {
  const lines = err.message.split("\n");
  // A parse error's last line says what was expected; a compile error's first line is the message, its place appended.
  const what = (err.lineNumber === undefined ? lines[lines.length - 1]! : lines[0]!)
    .replace(/ - \d+:\d+$/, "")
    .replace("You specified knownHelpersOnly, but used the unknown helper", "unknown helper");
  if (err.lineNumber !== undefined) return `does not compile at line ${err.lineNumber}, column ${(err.column ?? 0) + 1}: ${what}`;
  const at = (Handlebars as unknown as { Parser: { lexer: { yylloc: { first_line: number; first_column: number } } } }).Parser.lexer.yylloc;
  return `does not compile at line ${at.first_line}, column ${at.first_column + 1}: ${what}`;
}

/**
 * Where raw HTML's Handlebars source fails before anything renders it, as "does not compile at line L, column C: what",
 * or undefined: a syntax error, a helper that does not exist, a partial. Runs on a schema thread (schema-thread.ts), never
 * on the gateway's event loop: Handlebars' parser and compiler take seconds for a valid source of the largest size.
 */
export function handlebarsProblem(source: string): string | undefined {
  let ast: hbs.AST.Program;
  try {
    ast = Handlebars.parse(source);
  } catch (err) {
    return located(err as Error);
  }
  const partial = firstPartial(ast.body);
  if (partial?.loc) {
    return `does not compile at line ${partial.loc.start.line}, column ${partial.loc.start.column + 1}: partials ({{> name}}) are not supported`;
  }
  try {
    Handlebars.precompile(ast, { knownHelpers: KNOWN_HELPERS, knownHelpersOnly: true });
    return undefined;
  } catch (err) {
    return located(err as Error);
  }
}

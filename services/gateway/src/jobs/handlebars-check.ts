import Handlebars from "handlebars";

/**
 * The helpers a document's Handlebars source may call: Handlebars' own block helpers and lookup, and Pressroom's
 * (render's catalog registers the same). `log` is not one: render removes it.
 */
const KNOWN_HELPERS = { money: true, date: true, add: true, multiply: true, log: false } as const;

interface HandlebarsNode {
  type?: string;
  loc?: { start: { line: number; column: number } };
  [key: string]: unknown;
}

/** The first partial (`{{> name}}`) in a parsed template: there are none to include. */
function firstPartial(node: unknown): HandlebarsNode | undefined {
  if (Array.isArray(node)) {
    for (const item of node) {
      const found = firstPartial(item);
      if (found) return found;
    }
    return undefined;
  }
  if (node === null || typeof node !== "object") return undefined;
  const n = node as HandlebarsNode;
  if (n.type === "PartialStatement" || n.type === "PartialBlockStatement") return n;
  for (const key of ["body", "program", "inverse"]) {
    const found = firstPartial(n[key]);
    if (found) return found;
  }
  return undefined;
}

/**
 * Where raw HTML's Handlebars source fails before anything renders it, as "does not compile at line L, column C: what",
 * or undefined: a syntax error, a helper that does not exist, a partial. Checked at the request, so it is refused
 * before admission (not charged) instead of failing the render.
 */
export function handlebarsProblem(source: string): string | undefined {
  let ast: hbs.AST.Program;
  try {
    ast = Handlebars.parse(source);
  } catch (err) {
    const lines = (err as Error).message.split("\n");
    // A parse error: the lexer stopped at the offending token.
    const at = (Handlebars as unknown as { Parser: { lexer: { yylloc: { first_line: number; first_column: number } } } }).Parser.lexer.yylloc;
    return `does not compile at line ${at.first_line}, column ${at.first_column + 1}: ${lines[lines.length - 1]}`;
  }
  const partial = firstPartial(ast.body);
  if (partial?.loc) {
    return `does not compile at line ${partial.loc.start.line}, column ${partial.loc.start.column + 1}: partials ({{> name}}) are not supported`;
  }
  try {
    Handlebars.precompile(ast, { knownHelpers: KNOWN_HELPERS, knownHelpersOnly: true });
    return undefined;
  } catch (err) {
    const error = err as Error & { lineNumber?: number; column?: number };
    const message = error.message
      .split("\n")[0]!
      .replace(/ - \d+:\d+$/, "")
      .replace("You specified knownHelpersOnly, but used the unknown helper", "unknown helper");
    return error.lineNumber === undefined
      ? `does not compile: ${message}`
      : `does not compile at line ${error.lineNumber}, column ${(error.column ?? 0) + 1}: ${message}`;
  }
}

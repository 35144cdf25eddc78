/**
 * The body of one schema thread (see schemas.ts): compiles customers' data schemas and checks data
 * against them, and checks raw HTML's Handlebars source, one task at a time, off the gateway's event loop.
 */
import { serveThread } from "@pressroom/platform/thread-pool";
import { handlebarsProblem } from "./handlebars-check";
import { SchemaCompiler, type SchemaVerdict } from "./schema-compiler";

/** A request's Handlebars source, named by its field ("html", "documents[1].html"). */
export interface HtmlSource {
  field: string;
  html: string;
}

/**
 * At save (`check`: the schema and its sample data), at a render (`validate`: data against a stored version's schema,
 * `handlebars`: raw HTML's sources, the first problem answered).
 */
export type SchemaTask =
  | { op: "check"; schemaJson: string; sampleJson: string }
  | { op: "validate"; key: string; schemaJson: string; data: unknown }
  | { op: "handlebars"; sources: HtmlSource[] }
  | { op: "size" };

export type SchemaReply = SchemaVerdict | { size: number } | { field: string; problem: string } | { compiles: true };

/** Compiled schemas kept per thread (each template version's once; the least recently used go first). */
const KEPT = 256;
const compiler = new SchemaCompiler(KEPT);
// Handlebars' parser and compiler warmed now, before the thread takes a task: no request's budget pays for it.
handlebarsProblem("{{#each a}}{{money b}}{{/each}}");

function firstHandlebarsProblem(sources: HtmlSource[]): SchemaReply {
  for (const { field, html } of sources) {
    const problem = handlebarsProblem(html);
    if (problem) return { field, problem };
  }
  return { compiles: true };
}

serveThread<SchemaTask, SchemaReply>((task) => {
  if (task.op === "size") return { size: compiler.size };
  if (task.op === "handlebars") return firstHandlebarsProblem(task.sources);
  return task.op === "check" ? compiler.check(task.schemaJson, task.sampleJson) : compiler.validate(task.key, task.schemaJson, task.data);
});

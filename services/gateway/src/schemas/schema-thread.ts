/**
 * The body of one schema thread (see schemas.ts): compiles customers' data schemas and checks data
 * against them, one task at a time, off the gateway's event loop.
 */
import { serveThread } from "@pressroom/platform/thread-pool";
import { SchemaCompiler, type SchemaVerdict } from "./schema-compiler";

/** At save (`check`: the schema and its sample data) or at a render (`validate`: data against a stored version's schema). */
export type SchemaTask =
  { op: "check"; schemaJson: string; sampleJson: string } | { op: "validate"; key: string; schemaJson: string; data: unknown } | { op: "size" };

export type SchemaReply = SchemaVerdict | { size: number };

/** Compiled schemas kept per thread (each template version's once; the least recently used go first). */
const KEPT = 256;
const compiler = new SchemaCompiler(KEPT);

serveThread<SchemaTask, SchemaReply>((task) => {
  if (task.op === "size") return { size: compiler.size };
  return task.op === "check" ? compiler.check(task.schemaJson, task.sampleJson) : compiler.validate(task.key, task.schemaJson, task.data);
});

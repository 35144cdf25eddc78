import path from "node:path";
import type { renderV1 } from "@pressroom/contracts";
import { AppError, ThreadPool, ThreadTaskFailed } from "@pressroom/platform";
import { errors } from "../errors";
import type { DataError, SchemaVerdict } from "./schema-compiler";
import type { SchemaProblem } from "./schema-rules";
import type { HtmlSource, SchemaReply, SchemaTask } from "./schema-thread";

/**
 * The schema time budget of one task on a schema thread: a save's check (compile, sample data) and a render's check of its
 * data (a compile included, once per version and thread). Linear checks of the largest data take milliseconds: the margin
 * is for a loaded machine, so that legitimate data is never refused for it.
 */
export const SCHEMA_BUDGET_MS = { save: 1_000, render: 1_000 };

/**
 * The time budget of raw HTML's Handlebars check (all of a request's sources), from when it is asked, its wait for a thread
 * included. A check past it does not refuse the request: its sources go to the renderer unchecked, which compiles them on
 * threads of its own within the job's deadline (a source that does not compile then fails the job, RENDER_FAILED). So a
 * legitimate large source is never refused for a loaded machine, and a crafted one holds a schema thread for this long at most.
 */
export const HANDLEBARS_BUDGET_MS = 1_000;

const HANDLEBARS_HINT = "Fix the Handlebars source at that line and column; the helpers are money, date, add and multiply, and there are no partials.";

const THREAD_FILE = path.join(__dirname, `schema-thread${path.extname(__filename)}`);
const SCHEMA_HINT = "Send a JSON Schema (draft 2020-12) as data_schema and sample_data that satisfies it.";

/** "/properties/a~1b" → ".properties.a/b", how the messages name a place in a document. */
const dotted = (pointer: string) =>
  pointer
    .split("/")
    .slice(1)
    .map((token) => `.${token.replace(/~1/g, "/").replace(/~0/g, "~")}`)
    .join("");

/** Data that failed a template's schema: 422 naming the failing field. */
export function dataProblem(templateId: string, first: DataError | undefined): AppError {
  if (!first) return errors.payload("data: does not match the template's schema");
  const missing = first.keyword === "required" ? `/${String((first.params as { missingProperty?: string }).missingProperty)}` : "";
  const extra = first.keyword === "additionalProperties" ? `/${String((first.params as { additionalProperty?: string }).additionalProperty)}` : "";
  const message =
    first.keyword === "required"
      ? "is required"
      : first.keyword === "additionalProperties"
        ? "is not allowed by the template"
        : (first.message ?? "is invalid");
  return errors.payload(
    `data${dotted(`${first.instancePath}${missing}${extra}`)}: ${message}`,
    `See the data_schema of template "${templateId}" in GET /v1/templates.`,
  );
}

function schemaProblem(problem: SchemaProblem, where: string, hint: string): AppError {
  const keyword = problem.keyword && !problem.pointer.endsWith(`/${problem.keyword}`) ? ` (${problem.keyword})` : "";
  return errors.payload(`${where}${dotted(problem.pointer)}${keyword}: ${problem.message}`, hint);
}

/**
 * Customers' data schemas, compiled and run on a small pool of threads (raw HTML's Handlebars is checked there too), each task within the schema
 * time budget (its thread is terminated and replaced past it): a schema can hold no request but its
 * own, and the gateway's event loop not at all. Patterns run on RE2 (linear time); a schema that
 * breaks the budget's rules (schema-rules.ts) is refused at save, naming the keyword.
 */
export class CustomerSchemas {
  private readonly pool: ThreadPool<SchemaTask, SchemaReply>;

  constructor(opts: { threads: number; maxQueued?: number }) {
    this.pool = new ThreadPool({ file: THREAD_FILE, threads: opts.threads, maxQueued: opts.maxQueued ?? 512, memoryMiB: 128 });
  }

  /** At save: data_schema meets the budget's rules, is a schema that compiles, and sample_data satisfies it. */
  async check(schema: Record<string, unknown>, sample: Record<string, unknown>): Promise<AppError | undefined> {
    const task: SchemaTask = { op: "check", schemaJson: JSON.stringify(schema), sampleJson: JSON.stringify(sample) };
    const verdict = await this.run(task, SCHEMA_BUDGET_MS.save, "data_schema: checking sample_data against it");
    if (verdict instanceof AppError) return verdict;
    if (verdict.ok) return undefined;
    if ("schemaProblem" in verdict) return schemaProblem(verdict.schemaProblem, "data_schema", SCHEMA_HINT);
    return errors.payload(`sample_data${dotted(verdict.error.instancePath)}: ${verdict.error.message ?? "does not satisfy data_schema"}`, SCHEMA_HINT);
  }

  /** At a render: `data` against an own template's schema, 422 naming the failing field. */
  async validate(template: renderV1.Template, data: unknown): Promise<AppError | undefined> {
    const key = `${template.owner}/${template.id}#${template.generation}@${template.version}`;
    const task: SchemaTask = { op: "validate", key, schemaJson: template.dataSchemaJson, data };
    const verdict = await this.run(task, SCHEMA_BUDGET_MS.render, `data: checking it against the data_schema of template "${template.id}"`);
    if (verdict instanceof AppError) return verdict;
    if (verdict.ok) return undefined;
    if ("schemaProblem" in verdict)
      return schemaProblem(
        verdict.schemaProblem,
        `template "${template.id}": data_schema`,
        "Save the template again with a data_schema within the schema budget.",
      );
    return dataProblem(template.id, verdict.error);
  }

  /**
   * Raw HTML's Handlebars sources, checked before admission: the first that does not compile (a syntax error, an unknown
   * helper, a partial) is 422 naming its field, line and column. `unchecked` says why none was checked within the budget
   * (HANDLEBARS_BUDGET_MS): the renderer checks them then.
   */
  async handlebars(sources: HtmlSource[]): Promise<{ problem?: AppError; unchecked?: string }> {
    if (sources.length === 0) return {};
    let reply: SchemaReply;
    try {
      reply = await this.pool.run({ op: "handlebars", sources }, HANDLEBARS_BUDGET_MS, { waitCounts: true });
    } catch (err) {
      if (!(err instanceof ThreadTaskFailed)) throw err;
      return { unchecked: `${err.reason}: ${err.message}` };
    }
    return "problem" in reply ? { problem: errors.payload(`${reply.field}: ${reply.problem}`, HANDLEBARS_HINT) } : {};
  }

  /** The compiled schemas one thread keeps (with one thread: the pool's). */
  async kept(): Promise<number> {
    const reply = await this.pool.run({ op: "size" }, SCHEMA_BUDGET_MS.save);
    return "size" in reply ? reply.size : 0;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async run(task: SchemaTask, budgetMs: number, what: string): Promise<SchemaVerdict | AppError> {
    try {
      return (await this.pool.run(task, budgetMs)) as SchemaVerdict;
    } catch (err) {
      if (!(err instanceof ThreadTaskFailed)) throw err;
      if (err.reason === "timeout")
        return errors.payload(`${what} took longer than ${budgetMs} ms (the schema time budget)`, "Simplify data_schema, or send less data.");
      if (err.reason === "memory" || err.reason === "threw")
        return errors.payload(`${what} failed: ${err.message}`, "Simplify data_schema, or send less data.");
      throw new AppError("UNAVAILABLE", "the schema threads are busy", "Retry with exponential backoff.");
    }
  }
}

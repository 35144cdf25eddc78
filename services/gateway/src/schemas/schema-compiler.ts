import type { ErrorObject, ValidateFunction } from "ajv/dist/2020";
import { newAjv } from "./ajv";
import { schemaBudgetProblem, type SchemaProblem } from "./schema-rules";

/** The first way data failed a schema, as Ajv reports it (plain data: it crosses threads). */
export type DataError = Pick<ErrorObject, "keyword" | "instancePath" | "params" | "message">;

/** A schema's verdict on data: passed, the first error, or a problem of the schema itself. */
export type SchemaVerdict = { ok: true } | { ok: false; error: DataError } | { ok: false; schemaProblem: SchemaProblem };

/**
 * Customers' data schemas, compiled on a schema thread (schema-thread.ts): each checked against
 * the budget's rules and the meta-schema, then compiled in an Ajv instance of its own, so nothing
 * of it stays once it leaves the bounded cache of compiled schemas.
 */
export class SchemaCompiler {
  /** Validates schemas against the draft 2020-12 meta-schema only; never compiles a customer's schema. */
  private readonly meta = newAjv();
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly maxCompiled: number) {
    // Compiles the meta-schema now, before the thread takes a task: no task pays for it.
    this.meta.validateSchema({});
  }

  /** Compiled schemas kept now. */
  get size(): number {
    return this.compiled.size;
  }

  /** At save: the schema meets the rules, is a valid schema, compiles, and `sample` satisfies it. */
  check(schemaJson: string, sampleJson: string): SchemaVerdict {
    const compiled = this.compile(schemaJson);
    return "schemaProblem" in compiled ? { ok: false, schemaProblem: compiled.schemaProblem } : verdict(compiled.validate, JSON.parse(sampleJson));
  }

  /** At a render: `data` against the schema of the template version `key` names, compiled once per version. */
  validate(key: string, schemaJson: string, data: unknown): SchemaVerdict {
    let validate = this.compiled.get(key);
    if (validate) {
      this.compiled.delete(key);
    } else {
      const compiled = this.compile(schemaJson);
      if ("schemaProblem" in compiled) return { ok: false, schemaProblem: compiled.schemaProblem };
      validate = compiled.validate;
      for (const oldest of this.compiled.keys()) {
        if (this.compiled.size < this.maxCompiled) break;
        this.compiled.delete(oldest);
      }
    }
    this.compiled.set(key, validate);
    return verdict(validate, data);
  }

  private compile(schemaJson: string): { validate: ValidateFunction } | { schemaProblem: SchemaProblem } {
    const schema = JSON.parse(schemaJson) as Record<string, unknown>;
    const problem = schemaBudgetProblem(schema);
    if (problem) return { schemaProblem: problem };
    if (!this.meta.validateSchema(schema)) {
      const first = this.meta.errors?.[0];
      return {
        schemaProblem: {
          keyword: first?.keyword ?? "",
          pointer: first?.instancePath ?? "",
          message: `is not a valid JSON Schema: ${first?.message ?? "invalid"}`,
        },
      };
    }
    try {
      return { validate: newAjv(true).compile(schema) };
    } catch (err) {
      return { schemaProblem: { keyword: "", pointer: "", message: `does not compile: ${(err as Error).message}` } };
    }
  }
}

function verdict(validate: ValidateFunction, data: unknown): SchemaVerdict {
  if (validate(data)) return { ok: true };
  const first = validate.errors?.[0];
  return { ok: false, error: { keyword: first?.keyword ?? "", instancePath: first?.instancePath ?? "", params: first?.params ?? {}, message: first?.message } };
}

import type { z } from "@pressroom/platform";
import type { Context } from "koa";
import { errors } from "./errors";

/**
 * A request's query parameters read with their zod schema (the one the OpenAPI document shows):
 * an empty value counts as absent, a repeated one as its last; the first failure is a 422 naming
 * the parameter. Parameters the schema does not name are ignored.
 */
export function readQuery<T extends z.ZodObject>(ctx: Context, schema: T, hint: string): z.infer<T> {
  const raw: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.query)) {
    const last = Array.isArray(value) ? value.at(-1) : value;
    if (last) raw[name] = last;
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw errors.payload(`${issue.path.join(".")}: ${issue.message}`, hint);
}

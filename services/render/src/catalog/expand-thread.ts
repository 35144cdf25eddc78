/**
 * The body of one template-expansion thread (see expander.ts): compiles and
 * runs Handlebars for one job at a time, off the render service's event loop.
 */
import { serveThread } from "@pressroom/platform/thread-pool";
import { compileTemplate, type CompiledTemplate } from "./handlebars";
import type { ExpandReply, ExpandTask } from "./expander";

/** Compiled catalog templates kept per thread (versions are immutable). */
const MAX_COMPILED = 128;
const compiled = new Map<string, CompiledTemplate>();

function compiledFor(task: ExpandTask): CompiledTemplate {
  if (!task.cacheKey) return compileTemplate(task.source);
  let template = compiled.get(task.cacheKey);
  if (!template) {
    template = compileTemplate(task.source);
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(task.cacheKey, template);
  }
  return template;
}

function expand(task: ExpandTask): ExpandReply {
  let html: string;
  try {
    html = compiledFor(task)(JSON.parse(task.dataJson || "{}"));
  } catch (err) {
    // V8's string length limit is an output cap like ours, not a template error.
    if (err instanceof RangeError && /string length/i.test(err.message)) return { failure: "output_cap" };
    return { failure: "template", message: (err as Error).message };
  }
  if (Buffer.byteLength(html) > task.maxBytes) return { failure: "output_cap" };
  return { html };
}

serveThread(expand);

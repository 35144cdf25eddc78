/**
 * The body of one template-expansion thread (see expander.ts): compiles and
 * runs Handlebars for one job at a time, off the render service's event loop,
 * keeping compiled templates for the jobs that come after.
 */
import { serveThread } from "@pressroom/platform/thread-pool";
import { CompiledCache } from "./compiled-cache";
import { compileTemplate, type CompiledTemplate } from "./handlebars";
import type { ExpandReply, ExpandTask } from "./expander";

/** Compiled catalog templates kept per thread (versions are immutable). */
const MAX_COMPILED = 128;
const compiled = new Map<string, CompiledTemplate>();

/**
 * Compiled raw HTML (and headers and footers) kept per thread, by its source's hash and its key, apart from the
 * catalog's so that a stream of distinct raw HTML never evicts a catalog template. A compiled
 * template holds about 7 to 10 times its source's bytes of heap (8 KiB for the smallest), besides
 * its source: 2 MiB of source is then 16 to 22 MiB, under a tenth of the 256 MiB heap a thread
 * has for a job's expansion, and holds four of the largest raw HTML (512 KiB) or about 250 of an
 * 8 KiB invoice. 256 entries keep the smallest to about 2 MiB of heap.
 */
const raw = new CompiledCache(compileTemplate, { maxBytes: 2 * 1024 * 1024, maxEntries: 256 });

function compiledFor(task: ExpandTask): CompiledTemplate {
  if (!task.cacheKey) return raw.get(task.source, task.keyId);
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

import { createHash } from "node:crypto";
import type { CompiledTemplate } from "./handlebars";

export interface CompiledCacheLimits {
  /** The most UTF-8 bytes of source whose compiled templates are kept at once. */
  maxBytes: number;
  /** The most templates kept at once. */
  maxEntries: number;
}

/** What a cache holds and has done since it was made. */
export interface CompiledCacheStats {
  /** Lookups answered from the cache. */
  hits: number;
  /** Lookups that compiled the source (the first of a source, or its first since it was evicted). */
  compiles: number;
  entries: number;
  /** UTF-8 bytes of the sources kept. */
  bytes: number;
}

interface Entry {
  template: CompiledTemplate;
  bytes: number;
}

/**
 * Compiled templates of sources that have no version to be named by (raw HTML, a request's
 * header and footer), keyed by the SHA-256 of the exact source and the API key that sent it:
 * the same source of one key compiles once, whatever data it is filled with. Never shared
 * between keys: a key whose source came back at once would learn that another key had sent
 * the same. A cache compiles with one function (one set of
 * compile options, one Handlebars environment), so the source alone decides what it compiles to.
 *
 * Least recently used entries are evicted past either limit; a source larger than maxBytes is
 * compiled and not kept. Only performance depends on what is kept: a compiled template keeps
 * nothing of a render (data and runtime options are passed to each call).
 *
 * A source that does not compile is kept as its failure: Handlebars' parse and compile errors
 * depend on the source alone, and a crafted one can take seconds to reach its error, so the
 * same source fails again at once, with the same message. A RangeError (the stack overflowed on
 * deep nesting) is not kept: where the stack runs out depends on the thread's frames at the time.
 */
export class CompiledCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private hits = 0;
  private compiles = 0;

  constructor(
    private readonly compile: (source: string) => CompiledTemplate,
    private readonly limits: CompiledCacheLimits,
  ) {}

  /** The compiled template of `source` sent by `keyId` (a failure throws its error when called), compiled only when not kept. */
  get(source: string, keyId: string): CompiledTemplate {
    const key = createHash("sha256").update(keyId, "utf8").update("\0").update(source, "utf8").digest("hex");
    const kept = this.entries.get(key);
    if (kept) {
      // A Map iterates in insertion order: re-inserting makes this the most recently used.
      this.entries.delete(key);
      this.entries.set(key, kept);
      this.hits++;
      return kept.template;
    }
    this.compiles++;
    const template = this.compiled(source);
    this.keep(key, { template, bytes: Buffer.byteLength(source, "utf8") });
    return template;
  }

  stats(): CompiledCacheStats {
    return { hits: this.hits, compiles: this.compiles, entries: this.entries.size, bytes: this.bytes };
  }

  private compiled(source: string): CompiledTemplate {
    try {
      return this.compile(source);
    } catch (err) {
      if (err instanceof RangeError) throw err;
      return () => {
        throw err;
      };
    }
  }

  private keep(key: string, entry: Entry): void {
    if (entry.bytes > this.limits.maxBytes) return;
    this.entries.set(key, entry);
    this.bytes += entry.bytes;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= this.limits.maxBytes && this.entries.size <= this.limits.maxEntries) break;
      this.entries.delete(oldest);
      this.bytes -= old.bytes;
    }
  }
}

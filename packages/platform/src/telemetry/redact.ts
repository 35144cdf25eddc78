import type { ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";

const SECRET_PATTERNS: [RegExp, string][] = [
  [/([?&]sig=)[^&#\s"']*/g, "$1[redacted]"],
  [/\bpr_(?:live|demo|test)_[A-Za-z0-9_]+/g, "[redacted-key]"],
  [/\bwhsec_[A-Za-z0-9_+/=-]+/g, "[redacted-secret]"],
  [/\b(Bearer)\s+\S+/gi, "$1 [redacted]"],
];

/** Removes signed-URL signatures, API keys and webhook secrets from a string. */
export function redactSecrets(value: string): string {
  let out = value;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/**
 * Span attributes that hold a URL or its query string. Every query value in
 * them is redacted, whatever its name: customers' URLs (a webhook_url, a
 * document's presigned image URL) may carry tokens of their own.
 */
const URL_ATTRIBUTES = new Set(["url.full", "url.original", "url.query", "http.url", "http.target"]);

/** Replaces every value of a URL's (or a bare query string's) query with [redacted], keeping the names. */
export function redactQueryValues(value: string, bareQuery = false): string {
  const text = bareQuery ? `?${value}` : value;
  const out = text.replace(/([?&][^=&#\s]+=)[^&#\s]*/g, "$1[redacted]");
  return bareQuery ? out.slice(1) : out;
}

function redactAttributes(attributes: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value === "string" && URL_ATTRIBUTES.has(key)) attributes[key] = redactSecrets(redactQueryValues(value, key === "url.query"));
    else if (typeof value === "string") attributes[key] = redactSecrets(value);
    else if (Array.isArray(value)) {
      attributes[key] = value.map((item: unknown) => (typeof item === "string" ? redactSecrets(item) : item));
    }
  }
}

/**
 * Wraps an exporter so that no span leaving the process carries a secret,
 * whichever instrumentation recorded it (for example an HTTP server span's
 * url.query of a signed download URL).
 */
export class RedactingSpanExporter implements SpanExporter {
  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    for (const span of spans) {
      redactAttributes(span.attributes as Record<string, unknown>);
      for (const event of span.events) if (event.attributes) redactAttributes(event.attributes as Record<string, unknown>);
    }
    this.inner.export(spans, resultCallback);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

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

function redactAttributes(attributes: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value === "string") attributes[key] = redactSecrets(value);
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

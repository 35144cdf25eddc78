import { trace } from "@opentelemetry/api";
import pino, { type Logger } from "pino";

export type { Logger } from "pino";

/** Field names whose values must never be written, wherever they appear. */
const REDACTED_PATHS = [
  "api_key",
  "apiKey",
  "authorization",
  "secret",
  "sig",
  "url",
  "signed_url",
  "webhook_secret",
  "password",
  "*.api_key",
  "*.apiKey",
  "*.authorization",
  "*.secret",
  "*.sig",
  "*.url",
  "*.signed_url",
  "*.password",
  "req.headers.authorization",
  "headers.authorization",
];

/**
 * JSON logs with the service name and the active trace and span ids.
 * Keys, secrets and signed URLs are redacted by field name; callers also never
 * pass request bodies.
 */
export function createLogger(service: string, level = "info", destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      mixin() {
        const span = trace.getActiveSpan();
        if (!span) return {};
        const { traceId, spanId } = span.spanContext();
        return { trace_id: traceId, span_id: spanId };
      },
    },
    destination,
  );
}

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import { context, trace } from "@opentelemetry/api";
import { startTelemetry, shutdownTelemetry } from "./setup";

// Each test file runs in its own process: this one starts telemetry as a service does with no OTLP endpoint.
delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
startTelemetry({ serviceName: "setup-test" });

describe("telemetry without an exporter", () => {
  it("makes no spans and tracks no context", async () => {
    const span = trace.getTracer("test").startSpan("work");
    assert.equal(span.isRecording(), false);
    assert.equal(span.spanContext().traceId, "00000000000000000000000000000000");
    await context.with(trace.setSpan(context.active(), span), async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      assert.equal(trace.getActiveSpan(), undefined, "no context manager carries a span across an await");
    });
  });

  it("patches no module for spans", () => {
    const http = createRequire(__filename)("node:http") as typeof import("node:http");
    assert.equal((http.request as { __wrapped?: boolean }).__wrapped, undefined);
  });

  it("shuts down cleanly", async () => {
    await shutdownTelemetry();
  });
});

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { describe, it } from "node:test";
import { context, trace } from "@opentelemetry/api";
import https from "node:https";
import { outgoingOrigin, startTelemetry, shutdownTelemetry } from "./setup";

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

  it("is not started again in a worker thread, which inherits the preload", async () => {
    const preload = `require(${JSON.stringify(require.resolve("tsx/cjs"))}); require(${JSON.stringify(path.join(__dirname, "register.ts"))});`;
    const probe = `${preload} require("node:worker_threads").parentPort.postMessage(globalThis[Symbol.for("pressroom.telemetry")] !== undefined);`;
    const worker = new Worker(probe, { eval: true });
    const [started] = (await new Promise((resolve, reject) => {
      worker.once("message", (m) => resolve([m]));
      worker.once("error", reject);
    })) as [boolean];
    await worker.terminate();
    assert.equal(started, false);
  });

  it("shuts down cleanly", async () => {
    await shutdownTelemetry();
  });
});

describe("outgoing HTTP spans' url.full", () => {
  it("is the scheme, host and port of the request, never its path or query", () => {
    const path = "/services/T000/B000/slack-path-token?token=t";
    assert.equal(outgoingOrigin({ protocol: "https:", hostname: "hooks.slack.com", port: 443, path }), "https://hooks.slack.com:443");
    assert.equal(outgoingOrigin({ host: "cdn.example.com:8080", path }), "http://cdn.example.com:8080");
    assert.equal(outgoingOrigin({ hostname: "hooks.example.com", agent: new https.Agent(), path }), "https://hooks.example.com:443");
    assert.equal(outgoingOrigin({ protocol: "http:", hostname: "::1", port: 8080, path }), "http://[::1]:8080");
  });
});

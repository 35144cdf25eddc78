/**
 * Preloaded with `node --require @pressroom/platform/telemetry`, before any
 * module it instruments. The service name comes from OTEL_SERVICE_NAME.
 */
import { isMainThread } from "node:worker_threads";
import { startTelemetry } from "./setup";

// Worker threads inherit the preload; their metrics would be served by no one (render's template
// threads make no spans), and each would still pay for its own event-loop monitor.
if (isMainThread) startTelemetry({ serviceName: process.env.OTEL_SERVICE_NAME ?? "pressroom" });

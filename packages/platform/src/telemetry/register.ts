/**
 * Preloaded with `node --require @pressroom/platform/telemetry`, before any
 * module it instruments. The service name comes from OTEL_SERVICE_NAME.
 */
import { startTelemetry } from "./setup";

startTelemetry({ serviceName: process.env.OTEL_SERVICE_NAME ?? "pressroom" });

import type { RequestOptions } from "node:http";
import { createNoopMeter, metrics } from "@opentelemetry/api";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { OTLPMetricExporter as OTLPJsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPTraceExporter as OTLPJsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { registerInstrumentations, type Instrumentation } from "@opentelemetry/instrumentation";
import { GrpcInstrumentation } from "@opentelemetry/instrumentation-grpc";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { KoaInstrumentation } from "@opentelemetry/instrumentation-koa";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { RuntimeNodeInstrumentation } from "@opentelemetry/instrumentation-runtime-node";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader, type MetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME, ATTR_URL_FULL } from "@opentelemetry/semantic-conventions";
import { setPrometheusExporter } from "./metrics";
import { RedactingSpanExporter } from "./redact";

export interface TelemetryHandle {
  shutdown(): Promise<void>;
}

const HANDLE = Symbol.for("pressroom.telemetry");

type GlobalWithHandle = typeof globalThis & { [HANDLE]?: TelemetryHandle };

export function instrumentations(): Instrumentation[] {
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => req.url === "/livez" || req.url === "/readyz",
      // Replaces the instrumentation's own url.full, which would carry the path (Slack-style webhook URLs hold their token there).
      startOutgoingSpanHook: (request) => ({ [ATTR_URL_FULL]: outgoingOrigin(request) }),
    }),
    new GrpcInstrumentation({ ignoreGrpcMethods: ["Check", "Watch"] }),
    new KoaInstrumentation(),
    new PgInstrumentation({ enhancedDatabaseReporting: false }),
  ];
}

/**
 * Where an outgoing HTTP request goes, as an outgoing span records it: scheme,
 * host and port only. Customers' URLs (webhook callbacks, documents'
 * sub-resources) may carry a token in their path or query.
 */
export function outgoingOrigin(request: RequestOptions): string {
  const protocol = request.protocol ?? (request.agent as { protocol?: string } | undefined)?.protocol ?? "http:";
  const fromHost = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(request.host ?? "");
  const hostname = request.hostname ?? fromHost?.[1] ?? "localhost";
  const port = request.port ?? fromHost?.[2] ?? (protocol === "https:" ? 443 : 80);
  return `${protocol}//${hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname}:${port}`;
}

/**
 * How often the event-loop delay is sampled. The instrumentation's default, every 10 ms, is a
 * timer that woke each process 100 times a second, idle or not: a few milliseconds of CPU per
 * second per process (`npm run bench -- cpu`). Ten samples a second still show a loop that stalls.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/** OTLP/HTTP with protobuf bodies (the OpenTelemetry default), or JSON when OTEL_EXPORTER_OTLP_PROTOCOL is http/json. */
function otlpJson(): boolean {
  return process.env.OTEL_EXPORTER_OTLP_PROTOCOL === "http/json";
}

/**
 * Starts tracing and metrics for one process. Spans are exported by OTLP/HTTP
 * when OTEL_EXPORTER_OTLP_ENDPOINT is set (or to the given exporter, in
 * tests); every exporter is wrapped so no secret leaves the process. With no
 * exporter, tracing is not installed at all: its context tracking and the
 * instrumentations are a large share of every service's CPU per request
 * (bench/RESULTS.md, "cpu"), for spans nobody would receive. Metrics
 * are always served to Prometheus (`/metrics` on the health port) and also
 * pushed by OTLP when the endpoint is set. The instrumentations above record
 * spans only: their metrics would label customers' hosts and peers, so every
 * metric is Pressroom's own (docs/metrics.md) or the Node runtime's.
 */
export function startTelemetry(options: { serviceName: string; exporter?: SpanExporter }): TelemetryHandle {
  const existing = (globalThis as GlobalWithHandle)[HANDLE];
  if (existing) return existing;

  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName });
  const exporter = options.exporter ?? (endpoint ? (otlpJson() ? new OTLPJsonTraceExporter() : new OTLPTraceExporter()) : undefined);
  const tracerProvider = exporter
    ? new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new RedactingSpanExporter(exporter))] })
    : undefined;
  tracerProvider?.register();

  const prometheus = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true });
  setPrometheusExporter(prometheus);
  const readers: MetricReader[] = [prometheus];
  if (endpoint)
    readers.push(
      new PeriodicExportingMetricReader({ exporter: otlpJson() ? new OTLPJsonMetricExporter() : new OTLPMetricExporter(), exportIntervalMillis: 15_000 }),
    );
  const meterProvider = new MeterProvider({ resource, readers });
  metrics.setGlobalMeterProvider(meterProvider);

  const traced = tracerProvider ? instrumentations() : [];
  registerInstrumentations({ instrumentations: [...traced, new RuntimeNodeInstrumentation({ monitoringPrecision: EVENT_LOOP_SAMPLE_MS })] });
  const noMeters = { getMeter: () => createNoopMeter() };
  for (const instrumentation of traced) instrumentation.setMeterProvider(noMeters);

  const handle: TelemetryHandle = {
    async shutdown() {
      await Promise.allSettled([tracerProvider?.shutdown(), meterProvider.shutdown()]);
    },
  };
  (globalThis as GlobalWithHandle)[HANDLE] = handle;
  return handle;
}

/** Flushes and stops telemetry if it was started in this process. */
export async function shutdownTelemetry(): Promise<void> {
  await (globalThis as GlobalWithHandle)[HANDLE]?.shutdown();
}

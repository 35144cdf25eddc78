import { createServer, type Server } from "node:http";
import { decodeTraceExport, type DecodedSpan } from "./otlp-protobuf";

/** A span as the receiver decoded it from an export request. */
export type ReceivedSpan = DecodedSpan;

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
}

interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

interface OtlpTraces {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: OtlpKeyValue[];
        events?: { attributes?: OtlpKeyValue[] }[];
      }[];
    }[];
  }[];
}

function valueOf(value: OtlpAnyValue): unknown {
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  return value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
}

function attributes(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

/**
 * A test OTLP/HTTP receiver: the services export their spans to it, as
 * protobuf (the default) or JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json).
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Every request body received, verbatim, for leak checks. */
  readonly raw: string[] = [];
  /** The content type of every export request received. */
  readonly contentTypes = new Set<string>();
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const bytes = Buffer.concat(chunks);
        const protobuf = req.headers["content-type"] === "application/x-protobuf";
        this.contentTypes.add(req.headers["content-type"] ?? "");
        const body = bytes.toString(protobuf ? "latin1" : "utf8");
        this.raw.push(body);
        if (req.url === "/v1/traces" && protobuf) {
          this.spans.push(...decodeTraceExport(bytes));
        } else if (req.url === "/v1/traces") {
          const parsed = JSON.parse(body) as OtlpTraces;
          for (const resourceSpans of parsed.resourceSpans ?? []) {
            const service = String(attributes(resourceSpans.resource?.attributes)["service.name"]);
            for (const scope of resourceSpans.scopeSpans ?? []) {
              for (const span of scope.spans ?? []) {
                this.spans.push({
                  service,
                  traceId: span.traceId,
                  spanId: span.spanId,
                  parentSpanId: span.parentSpanId ?? "",
                  name: span.name,
                  kind: span.kind,
                  attributes: attributes(span.attributes),
                  eventAttributes: (span.events ?? []).map((event) => attributes(event.attributes)),
                });
              }
            }
          }
        }
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    return `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  }

  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

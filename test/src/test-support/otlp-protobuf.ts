/**
 * A decoder of the OTLP trace export request in the protobuf wire format
 * (opentelemetry-proto: collector/trace/v1 ExportTraceServiceRequest), for the
 * fields the tests read: resources' attributes, and spans' ids, parent, name,
 * kind, attributes and events' attributes.
 */

type Field = { number: number; wire: number; value: bigint | Buffer };

function readVarint(buf: Buffer, at: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[at++];
    if (byte === undefined) throw new Error("truncated varint");
    result |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return [result, at];
    shift += 7n;
  }
}

/** The fields of one message, in order; unknown wire types are an error. */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  while (at < buf.length) {
    const [tag, next] = readVarint(buf, at);
    at = next;
    const number = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (wire === 0) {
      const [value, after] = readVarint(buf, at);
      out.push({ number, wire, value });
      at = after;
    } else if (wire === 1) {
      out.push({ number, wire, value: buf.readBigUInt64LE(at) });
      at += 8;
    } else if (wire === 2) {
      const [length, after] = readVarint(buf, at);
      const end = after + Number(length);
      out.push({ number, wire, value: buf.subarray(after, end) });
      at = end;
    } else if (wire === 5) {
      out.push({ number, wire, value: BigInt(buf.readUInt32LE(at)) });
      at += 4;
    } else {
      throw new Error(`unsupported wire type ${wire}`);
    }
  }
  return out;
}

const bytesOf = (list: Field[], number: number): Buffer[] => list.filter((f) => f.number === number && f.wire === 2).map((f) => f.value as Buffer);
const firstBytes = (list: Field[], number: number): Buffer => bytesOf(list, number)[0] ?? Buffer.alloc(0);
const varintOf = (list: Field[], number: number): bigint => (list.find((f) => f.number === number && f.wire === 0)?.value as bigint | undefined) ?? 0n;

/** AnyValue: string 1, bool 2, int 3, double 4, array 5 (values 1), kvlist 6, bytes 7. */
function anyValue(buf: Buffer): unknown {
  const [field] = fields(buf);
  if (!field) return undefined;
  switch (field.number) {
    case 1:
      return (field.value as Buffer).toString("utf8");
    case 2:
      return field.value === 1n;
    case 3:
      return BigInt.asIntN(64, field.value as bigint).toString();
    case 4: {
      const out = Buffer.alloc(8);
      out.writeBigUInt64LE(field.value as bigint);
      return out.readDoubleLE();
    }
    case 5:
      return bytesOf(fields(field.value as Buffer), 1).map(anyValue);
    case 6:
      return attributesOf(fields(field.value as Buffer), 1);
    default:
      return (field.value as Buffer).toString("hex");
  }
}

/** KeyValue: key 1, value 2. */
function attributesOf(list: Field[], number: number): Record<string, unknown> {
  return Object.fromEntries(
    bytesOf(list, number).map((kv) => {
      const parts = fields(kv);
      return [firstBytes(parts, 1).toString("utf8"), anyValue(firstBytes(parts, 2))];
    }),
  );
}

export interface DecodedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  eventAttributes: Record<string, unknown>[];
}

/** ExportTraceServiceRequest: resource_spans 1 → resource 1 (attributes 1), scope_spans 2 → spans 2. */
export function decodeTraceExport(body: Buffer): DecodedSpan[] {
  const spans: DecodedSpan[] = [];
  for (const resourceSpans of bytesOf(fields(body), 1)) {
    const parts = fields(resourceSpans);
    const service = String(attributesOf(fields(firstBytes(parts, 1)), 1)["service.name"]);
    for (const scopeSpans of bytesOf(parts, 2)) {
      for (const spanBytes of bytesOf(fields(scopeSpans), 2)) {
        // Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, attributes 9, events 11 (attributes 3).
        const span = fields(spanBytes);
        spans.push({
          service,
          traceId: firstBytes(span, 1).toString("hex"),
          spanId: firstBytes(span, 2).toString("hex"),
          parentSpanId: firstBytes(span, 4).toString("hex"),
          name: firstBytes(span, 5).toString("utf8"),
          kind: Number(varintOf(span, 6)),
          attributes: attributesOf(span, 9),
          eventAttributes: bytesOf(span, 11).map((event) => attributesOf(fields(event), 3)),
        });
      }
    }
  }
  return spans;
}

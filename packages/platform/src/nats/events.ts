import { SpanKind, context, propagation, type Context } from "@opentelemetry/api";
import { headers as natsHeaders, type JetStreamClient, type MsgHdrs, type PubAck } from "nats";
import { withSpan } from "../telemetry/tracing";

export const EVENT_TYPE_HEADER = "Pressroom-Event-Type";

export interface PublishOptions {
  subject: string;
  /** The event id, sent as Nats-Msg-Id so the server drops duplicates. */
  msgId: string;
  type: string;
  data: Uint8Array;
  /** Optimistic concurrency: the subject's last sequence must be this (0 = no message yet). */
  expectLastSubjectSequence?: number;
  /** A span name template without ids, e.g. "pressroom.job.{id}.{writer}.v1". */
  spanSubject: string;
}

/** Publishes one event with its envelope headers and the W3C traceparent, awaiting the stream's ack. */
export function publishEvent(js: JetStreamClient, options: PublishOptions): Promise<PubAck> {
  return withSpan(
    `${options.spanSubject} publish`,
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        "messaging.system": "nats",
        "messaging.operation.type": "send",
        "messaging.destination.name": options.spanSubject,
        "messaging.message.id": options.msgId,
        "pressroom.event.type": options.type,
      },
    },
    async () => {
      const h = natsHeaders();
      h.set(EVENT_TYPE_HEADER, options.type);
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      for (const [key, value] of Object.entries(carrier)) h.set(key, value);
      return js.publish(options.subject, options.data, {
        msgID: options.msgId,
        headers: h,
        ...(options.expectLastSubjectSequence === undefined ? {} : { expect: { lastSubjectSequence: options.expectLastSubjectSequence } }),
      });
    },
  );
}

/** The trace context a message was published in. */
export function traceContextOf(headers: MsgHdrs | undefined): Context {
  const carrier: Record<string, string> = {};
  if (headers) {
    for (const key of ["traceparent", "tracestate"]) {
      const value = headers.get(key);
      if (value) carrier[key] = value;
    }
  }
  return propagation.extract(context.active(), carrier);
}

/** Runs a consumer's handler in a CONSUMER span that continues the publisher's trace. */
export function consumeSpan<T>(
  spanSubject: string,
  headers: MsgHdrs | undefined,
  attributes: Record<string, string | number | boolean>,
  fn: () => Promise<T>,
): Promise<T> {
  return withSpan(
    `${spanSubject} process`,
    {
      kind: SpanKind.CONSUMER,
      parent: traceContextOf(headers),
      attributes: { "messaging.system": "nats", "messaging.operation.type": "process", "messaging.destination.name": spanSubject, ...attributes },
    },
    fn,
  );
}

/** True when a publish failed because the expected last subject sequence did not match. */
export function isWrongLastSequence(err: unknown): boolean {
  const e = err as { api_error?: { err_code?: number }; message?: string };
  return e.api_error?.err_code === 10071 || /wrong last sequence/i.test(e.message ?? "");
}

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { DEMO_API_KEY } from "@pressroom/domain";
import { startTestStack, type TestStack } from "@pressroom/stack";
import { connect, type NatsConnection, StorageType } from "nats";
import { OtlpReceiver } from "./test-support/otlp-receiver";
import { pdfText } from "./test-support/pdf";

const SPAN_KIND = { SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 };

describe("one render end to end, through six processes", () => {
  const receiver = new OtlpReceiver();
  let stack: TestStack;
  let nc: NatsConnection;

  before(async () => {
    const endpoint = await receiver.start();
    stack = await startTestStack({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "100" } });
    nc = await connect({ servers: stack.natsUrl });
  });

  after(async () => {
    await nc?.close();
    await stack?.stop();
    await receiver.stop();
  });

  it("renders Hello Ada to a PDF behind a signed URL, as events on JetStream, in one trace", async () => {
    const response = await fetch(`${stack.baseUrl}/v1/render`, {
      method: "POST",
      headers: { authorization: `Bearer ${DEMO_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ html: "<h1>Hello {{name}}</h1>", data: { name: "Ada" } }),
    });
    const body = (await response.json()) as Record<string, unknown>;
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.deepEqual(Object.keys(body).sort(), ["content_type", "expires_at", "id", "size_bytes", "status", "url"]);
    assert.equal(body.status, "succeeded");
    assert.equal(body.content_type, "application/pdf");
    assert.match(String(body.id), /^job_[0-9a-z]{26}$/);
    assert.ok(Date.parse(String(body.expires_at)) > Date.now());

    const url = new URL(String(body.url));
    const sig = url.searchParams.get("sig");
    assert.match(sig ?? "", /^[0-9a-f]{64}$/);
    const download = await fetch(url);
    assert.equal(download.status, 200);
    assert.equal(download.headers.get("content-type"), "application/pdf");
    const pdf = new Uint8Array(await download.arrayBuffer());
    assert.equal(pdf.byteLength, body.size_bytes);
    assert.equal(Buffer.from(pdf.subarray(0, 5)).toString("latin1"), "%PDF-");
    assert.match(pdfText(pdf), /Hello Ada/);

    const jsm = await nc.jetstreamManager();
    const jobs = await jsm.streams.info("JOBS");
    assert.equal(jobs.config.storage, StorageType.File);
    const events: { type: string; id: string; msgId: string | undefined; traceparent: string | undefined }[] = [];
    let seq = 1;
    for (;;) {
      try {
        const message = await jsm.streams.getMessage("JOBS", { seq });
        const event = jobEventsV1.JobEvent.decode(message.data);
        if (event.jobId === body.id) {
          events.push({ type: event.type, id: event.id, msgId: message.header.get("Nats-Msg-Id"), traceparent: message.header.get("traceparent") });
          if (event.succeeded) assert.equal(event.succeeded.callback, false, "render's terminal event says no callback is wanted");
        }
        seq = message.seq + 1;
      } catch {
        break;
      }
    }
    assert.deepEqual(
      events.map((e) => e.type),
      ["job.accepted", "job.started", "job.succeeded"],
    );
    for (const event of events) {
      assert.equal(event.msgId, event.id, "the event id is also the Nats-Msg-Id");
      assert.match(event.traceparent ?? "", /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    }

    const traceId = response.headers.get("request-id");
    assert.match(traceId ?? "", /^[0-9a-f]{32}$/);
    const expected = (spans: typeof receiver.spans) => {
      const has = (service: string, kind: number, pattern: RegExp) => spans.some((s) => s.service === service && s.kind === kind && pattern.test(s.name));
      return (
        has("gateway", SPAN_KIND.SERVER, /POST/) &&
        has("gateway", SPAN_KIND.CLIENT, /IdentityService\/Authenticate/) &&
        has("identity", SPAN_KIND.SERVER, /IdentityService\/Authenticate/) &&
        has("gateway", SPAN_KIND.CLIENT, /MeteringService\/Admit/) &&
        has("gateway", SPAN_KIND.PRODUCER, /publish/) &&
        has("render", SPAN_KIND.CONSUMER, /process/) &&
        spans.some((s) => s.service === "render" && s.name === "render") &&
        has("render", SPAN_KIND.CLIENT, /StorageService\/RegisterOutput/) &&
        has("storage", SPAN_KIND.SERVER, /StorageService\/RegisterOutput/) &&
        spans.some((s) => s.service === "storage" && s.name === "storage.register") &&
        has("render", SPAN_KIND.PRODUCER, /publish/)
      );
    };
    const deadline = Date.now() + 15_000;
    while (!expected(receiver.trace(traceId!)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const spans = receiver.trace(traceId!);
    assert.ok(expected(spans), `one trace covers every hop; got:\n${spans.map((s) => `${s.service} ${s.kind} ${s.name}`).join("\n")}`);
    assert.equal(new Set(spans.map((s) => s.service)).size >= 4, true);

    // Let the download's own trace arrive too, then look for secrets anywhere.
    await new Promise((r) => setTimeout(r, 1_000));
    const telemetry = receiver.raw.join("\n");
    assert.ok(!telemetry.includes(sig!), "the URL's sig never reaches a span");
    assert.ok(!telemetry.includes(DEMO_API_KEY), "the API key never reaches a span");
    const logs = stack.output();
    assert.ok(logs.length > 0);
    assert.ok(!logs.includes(sig!), "the URL's sig never reaches a log line");
    assert.ok(!logs.includes(DEMO_API_KEY), "the API key never reaches a log line");
  });
});

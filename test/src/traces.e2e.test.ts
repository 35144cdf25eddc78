import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startHarness, type Harness } from "./test-support/harness";
import { OtlpReceiver, type ReceivedSpan } from "./test-support/otlp-receiver";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

const KIND = { SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 };

type Hop = [service: string, kind: number | undefined, name: RegExp];

/** gateway HTTP → gRPC → NATS publish → render consume → render → the output stored and registered → the outcome's publish. */
const RENDER_HOPS: Hop[] = [
  ["gateway", KIND.SERVER, /^POST/],
  ["gateway", KIND.CLIENT, /IdentityService\/Authenticate/],
  ["identity", KIND.SERVER, /IdentityService\/Authenticate/],
  ["gateway", KIND.CLIENT, /MeteringService\/Admit/],
  ["metering", KIND.SERVER, /MeteringService\/Admit/],
  ["gateway", KIND.PRODUCER, /publish/],
  ["render", KIND.CONSUMER, /process/],
  ["render", undefined, /^render$/],
  ["render", undefined, /^storage\.store_output$/],
  ["render", KIND.CLIENT, /StorageService\/RegisterOutput/],
  ["storage", KIND.SERVER, /StorageService\/RegisterOutput/],
  ["storage", undefined, /^storage\.register$/],
  ["render", KIND.PRODUCER, /publish/],
];

/** …then the webhook service consumes the outcome and posts the signed callback. */
const WEBHOOK_HOPS: Hop[] = [
  ["webhook", KIND.CONSUMER, /process/],
  ["webhook", KIND.CLIENT, /IdentityService\//],
  ["webhook", KIND.CLIENT, /^POST$/],
];

/** A Slack-style webhook URL: the token is a segment of the path. */
const PATH_TOKEN = "xoxb5pathtoken9Kq2LmN8vR4tZ";
const SLACK_STYLE_PATH = `/services/T0AAAAAAA/B0BBBBBBB/${PATH_TOKEN}`;

describe("traces over OTLP/protobuf: one trace per request, sync and async with a webhook", () => {
  const otlp = new OtlpReceiver();
  const receiver = new WebhookReceiver();
  let h: Harness;
  let apiKey: string;
  let webhookSecret: string;

  before(async () => {
    const endpoint = await otlp.start();
    await receiver.start();
    h = await startHarness({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "100" },
      // Every request authenticates over gRPC (no 2 s cache), so every trace has that hop.
      serviceEnv: { gateway: { AUTH_CACHE_MS: "0" }, webhook: receiver.env() },
    });
    apiKey = (await h.admin.createKey("business")).apiKey;
    const secret = await h.api.get("/v1/keys/webhook-secret", { key: apiKey });
    webhookSecret = secret.json.secret as string;
  });

  after(async () => {
    await h?.stop();
    await receiver.stop();
    await otlp.stop();
  });

  const missingHops = (spans: ReceivedSpan[], hops: Hop[]) =>
    hops.filter(([service, kind, name]) => !spans.some((s) => s.service === service && (kind === undefined || s.kind === kind) && name.test(s.name)));

  /** Spans whose parent is not (yet) among `spans`. */
  const orphansOf = (spans: ReceivedSpan[]) => {
    const ids = new Set(spans.map((s) => s.spanId));
    return spans.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId));
  };

  /** Waits until the trace has every hop and every parent, then checks it is one tree rooted at the gateway's HTTP span. */
  async function wholeTrace(traceId: string, hops: Hop[]): Promise<ReceivedSpan[]> {
    // A span is exported when it ends, and a parent ends after its children (the webhook's delivery after its POST
    // and the attempt's record): the trace is whole once every hop is there and every parent has come too.
    await eventually(
      `trace ${traceId} with every hop`,
      async () => {
        const spans = otlp.trace(traceId);
        return missingHops(spans, hops).length === 0 && orphansOf(spans).length === 0 ? true : undefined;
      },
      30_000,
      200,
    ).catch((err: Error) => {
      const spans = otlp.trace(traceId);
      throw new Error(
        `${err.message}; missing ${JSON.stringify(missingHops(spans, hops).map((hop) => hop.join(" ")))}; without their parent ${JSON.stringify(
          orphansOf(spans).map((s) => `${s.service} ${s.name}`),
        )}; got:\n${spans.map((s) => `${s.service} ${s.kind} ${s.name}`).join("\n")}`,
      );
    });
    const spans = otlp.trace(traceId);
    const roots = spans.filter((s) => !s.parentSpanId);
    assert.deepEqual(
      roots.map((s) => `${s.service} ${s.kind} ${s.name}`),
      ["gateway 2 POST /v1/render"],
      "one root: the gateway's HTTP span",
    );
    assert.deepEqual(
      orphansOf(spans).map((s) => `${s.service} ${s.name}`),
      [],
      "every parent link leads to a span of the same trace",
    );
    return spans;
  }

  /** Every JSON log line about one of these jobs carries its trace's id and a span id. */
  function assertLogsTraced(jobs: Map<string, string>, services: string[]): void {
    const lines = h.stack
      .output()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const about = lines.filter((line) => jobs.has(String(line.jobId)));
    for (const service of services)
      assert.ok(
        about.some((line) => line.service === service),
        `${service} logged about the jobs`,
      );
    const untraced = about.filter((line) => line.trace_id !== jobs.get(String(line.jobId)) || !/^[0-9a-f]{16}$/.test(String(line.span_id)));
    assert.deepEqual(untraced, [], "log lines without their request's trace_id and span_id");
  }

  it("a sync render is one trace from the gateway's HTTP span to the output's registration", async () => {
    const response = await h.api.post("/v1/render", { html: "<h1>Hello {{name}}</h1>", data: { name: "Ada" } }, { key: apiKey });
    assert.equal(response.status, 200, response.text);
    const traceId = response.headers["request-id"]!;
    assert.match(traceId, /^[0-9a-f]{32}$/);
    await wholeTrace(traceId, RENDER_HOPS);
    assertLogsTraced(new Map([[String(response.json.id), traceId]]), ["render"]);
    assert.deepEqual([...otlp.contentTypes], ["application/x-protobuf"], "the services export OTLP/HTTP in protobuf, the OpenTelemetry default");
  });

  it("an async render with a webhook is one trace through to the callback's delivery", async () => {
    const response = await h.api.post(
      "/v1/render",
      { html: "<h1>Hi</h1>", data: {}, webhook_url: receiver.url(`${SLACK_STYLE_PATH}?token=customer-token`) },
      { key: apiKey },
    );
    assert.equal(response.status, 202, response.text);
    const traceId = response.headers["request-id"]!;
    await receiver.waitFor(SLACK_STYLE_PATH, 1, 60_000);
    const spans = await wholeTrace(traceId, [...RENDER_HOPS, ...WEBHOOK_HOPS]);
    const callback = receiver.requestsOn(SLACK_STYLE_PATH)[0]!;
    assert.equal(callback.headers.traceparent?.split("-")[1], traceId, "the callback's HTTP request carries the trace too");
    // The callback's span records scheme, host and port only: the receiver's address, not the URL's path (its token).
    const post = spans.find((s) => s.service === "webhook" && s.kind === KIND.CLIENT && s.name === "POST");
    assert.match(String(post?.attributes["url.full"]), /^https:\/\/127\.0\.0\.1:\d+$/);
    const values = spans.flatMap((s) => [s.name, ...Object.values(s.attributes), ...s.eventAttributes.flatMap((a) => Object.values(a))].map(String));
    assert.deepEqual(
      values.filter((value) => value.includes(PATH_TOKEN)),
      [],
    );
    assertLogsTraced(new Map([[String(response.json.id), traceId]]), ["render", "webhook"]);
  });

  it("no span attribute carries an API key, a webhook secret, a URL signature or a customer's token", async () => {
    // A webhook job's output is not announced to the gateway: its download goes through storage's GetOutput.
    const accepted = await h.api.post("/v1/render", { html: "<p>x</p>", data: {}, webhook_url: receiver.url("/signed") }, { key: apiKey });
    assert.equal(accepted.status, 202, accepted.text);
    await receiver.waitFor("/signed", 1, 60_000);
    const job = (await h.api.get(`/v1/jobs/${String(accepted.json.id)}`, { key: apiKey })).json;
    const url = new URL(String(job.url));
    const sig = url.searchParams.get("sig")!;
    assert.equal((await h.api.download(url.toString())).status, 200);
    const downloadTrace = await eventually(
      "the download's spans",
      async () => {
        const spans = otlp.spans.filter((s) => s.service === "storage" && /GetOutput/.test(s.name));
        return spans.length > 0 ? spans : undefined;
      },
      30_000,
      200,
    );
    assert.ok(downloadTrace.length > 0);
    const secrets = [apiKey, webhookSecret, sig, "customer-token", PATH_TOKEN];
    const values = otlp.spans.flatMap((s) => [...Object.values(s.attributes), ...s.eventAttributes.flatMap((a) => Object.values(a))].map(String));
    assert.ok(values.length > 100, `${values.length} attribute values`);
    assert.deepEqual(
      secrets.filter((secret) => values.some((value) => value.includes(secret))),
      [],
    );
    const raw = otlp.raw.join("\n");
    assert.deepEqual(
      secrets.filter((secret) => raw.includes(secret)),
      [],
      "nor does any byte of the export requests",
    );
  });
});

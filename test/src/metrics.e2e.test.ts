import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { consumers, streams } from "@pressroom/platform";
import { planOf } from "@pressroom/domain";
import { SERVICE_NAMES, type ServiceName } from "@pressroom/stack";
import { connect, type NatsConnection } from "nats";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { documentedMetrics, scrape, seriesOf, total, type Sample } from "./test-support/prometheus";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

const HELLO = { html: "<h1>Hello {{name}}</h1>", data: { name: "Ada" } };
/** Ten pages, over the suite's RENDER_MAX_PAGES of 5: fails as page_cap. */
const TOO_LONG = { html: `<style>div { break-after: page }</style>${"<div>page</div>".repeat(10)}`, data: {} };

describe("metrics: every documented metric from real traffic, with bounded labels", () => {
  const receiver = new WebhookReceiver();
  let h: Harness;
  let nc: NatsConnection;
  const scraped = new Map<ServiceName, Sample[]>();
  /** Ids that must never be a label: keys, key ids, job ids. */
  const ids: string[] = [];

  const metricsOf = (name: ServiceName) => scrape(h.stack.ports.health[name]);

  before(async () => {
    receiver.on("/flaky", (n) => ({ status: n === 0 ? 500 : 200 }));
    receiver.on("/gone", () => ({ status: 410 }));
    await receiver.start();
    h = await startHarness({
      env: { RENDER_MAX_PAGES: "5" },
      serviceEnv: {
        // Long enough for the stack's first render (a cold Chromium and post-processing: 5 s on a busy machine), short enough for the fallbacks below.
        gateway: { SYNC_WAIT_MS: "10000" },
        storage: { SWEEP_INTERVAL_MS: "1000" },
        webhook: receiver.env({ WEBHOOK_RETRY_BASE_MS: "200", WEBHOOK_RETRY_CAP_MS: "1000" }),
      },
    });
    nc = await connect({ servers: h.stack.natsUrl });
  });

  after(async () => {
    await nc?.close();
    await h?.stop();
    await receiver.stop();
  });

  async function key(plan: string): Promise<{ apiKey: string; keyId: string }> {
    const created = await h.admin.createKey(plan);
    ids.push(created.apiKey, created.keyId);
    return created;
  }

  async function submit(path: string, body: Record<string, unknown>, apiKey: string): Promise<{ status: number; id: string; code?: string }> {
    const response = await h.api.post(path, body, { key: apiKey });
    const id = String(response.json.id ?? "");
    if (id) ids.push(id);
    return { status: response.status, id, code: response.json.code as string | undefined };
  }

  function finished(id: string, apiKey: string): Promise<Record<string, unknown>> {
    return eventually(
      `job ${id} finished`,
      async () => {
        const view = (await h.api.get(`/v1/jobs/${id}`, { key: apiKey })).json;
        return view.status === "succeeded" || view.status === "failed" ? view : undefined;
      },
      120_000,
      200,
    );
  }

  function metricReaches(service: ServiceName, metric: string, labels: Record<string, string>, atLeast: number): Promise<Sample[]> {
    return eventually(
      `${service} ${metric} ${JSON.stringify(labels)} ≥ ${atLeast}`,
      async () => {
        const samples = await metricsOf(service);
        return total(metric, samples, labels) >= atLeast ? samples : undefined;
      },
      60_000,
      200,
    );
  }

  /** A correctly signed download link of an output that does not exist: a cache miss, then 410. */
  function signedUnknownOutput(): string {
    const id = "out_00000000000000000000000000";
    const exp = Math.floor(Date.now() / 1000) + 600;
    const sig = createHmac("sha256", h.stack.signingSecret).update(`${id}.${exp}`).digest("hex");
    return `${h.stack.baseUrl}/v1/outputs/${id}?exp=${exp}&sig=${sig}`;
  }

  it("records renders, jobs, admission, webhooks, storage, the queue and Chromium as traffic flows", async () => {
    const business = await key("business");
    const demo = await key("demo");
    const free = await key("free");

    // A render that succeeds, downloaded (served by the gateway, to which render announced it), and an unknown output (a miss in storage).
    // Its metadata makes the worker post-process it (pressroom_render_postprocess_duration).
    const hello = await submit("/v1/render", { ...HELLO, options: { metadata: { title: "Hello" } } }, business.apiKey);
    assert.equal(hello.status, 200, "the first render answers within SYNC_WAIT_MS, so its output is announced to the gateway");
    const done = await finished(hello.id, business.apiKey);
    assert.equal(done.status, "succeeded");
    assert.equal((await h.api.download(String(done.url))).status, 200);
    assert.equal((await h.api.download(signedUnknownOutput())).status, 410);

    // An image made as a jpeg is counted as one, not as a png.
    const jpeg = await submit(
      "/v1/image",
      { template_id: "og-image", data: { headline: "Metrics", site_name: "Pressroom" }, options: { format: "jpeg" } },
      business.apiKey,
    );
    assert.equal((await finished(jpeg.id, business.apiKey)).status, "succeeded");
    const afterJpeg = await metricReaches("render", "pressroom_jobs_succeeded_total", { output: "jpeg" }, 1);
    assert.equal(total("pressroom_render_duration", afterJpeg, { output: "jpeg", outcome: "succeeded" }), 1);
    assert.equal(total("pressroom_render_output_size", afterJpeg, { output: "jpeg" }), 1);
    assert.equal(total("pressroom_jobs_succeeded_total", afterJpeg, { output: "png" }), 0);

    // Async jobs: one over the page cap (fails as the document's fault), and
    // webhooks delivered at once, on the second attempt, and given up on at a 410.
    const tooLong = await submit("/v1/render", { ...TOO_LONG, webhook_url: receiver.url("/failed") }, business.apiKey);
    const flaky = await submit("/v1/render", { ...HELLO, webhook_url: receiver.url("/flaky") }, business.apiKey);
    const gone = await submit("/v1/render", { ...HELLO, webhook_url: receiver.url("/gone") }, business.apiKey);
    assert.deepEqual([tooLong.status, flaky.status, gone.status], [202, 202, 202]);
    assert.equal((await finished(tooLong.id, business.apiKey)).status, "failed");
    for (const job of [flaky, gone]) assert.equal((await finished(job.id, business.apiKey)).status, "succeeded");
    // A webhook job's output is not announced: its downloads come from storage, the first read from the store, the next from its memory (a hit).
    const flakyUrl = String((await finished(flaky.id, business.apiKey)).url);
    for (let i = 0; i < 2; i++) assert.equal((await h.api.download(flakyUrl)).status, 200);
    // The render service is restarted below: what it counted so far is read now.
    await metricReaches("render", "pressroom_jobs_succeeded_total", { output: "pdf" }, 3);
    const firstRender = await metricReaches("render", "pressroom_jobs_failed_total", { error_code: "RENDER_FAILED" }, 1);
    assert.equal(total("pressroom_render_duration", firstRender, { output: "pdf", outcome: "failed", error_type: "page_cap" }), 1);
    assert.ok(total("pressroom_render_template_duration", firstRender) >= 4);

    // A key whose monthly quota is used up.
    await h.admin.setUsed(free.keyId, "free", planOf("free").rendersPerMonth);
    assert.equal((await submit("/v1/render", HELLO, free.apiKey)).code, "QUOTA_EXCEEDED");

    // With the render pool down, jobs wait in the queue: the demo plan's one
    // slot is taken, its next requests are refused, and sync waits end in 202.
    await h.stack.services.kill("render");
    const held = await submit("/v1/render", HELLO, demo.apiKey);
    assert.equal(held.status, 202, "a sync render without a render pool falls back to 202");
    assert.equal((await submit("/v1/render", HELLO, demo.apiKey)).code, "CONCURRENCY_EXCEEDED");
    assert.equal((await submit("/v1/render", HELLO, demo.apiKey)).code, "CONCURRENCY_EXCEEDED");
    assert.equal((await submit("/v1/render", HELLO, demo.apiKey)).code, "RATE_LIMITED");
    const waited = await submit("/v1/render", HELLO, business.apiKey);
    assert.equal(waited.status, 202);

    const jsm = await nc.jetstreamManager();
    const consumer = await jsm.consumers.info(streams.RENDER, consumers.renderWorkers);
    const queued = await metricsOf("gateway");
    assert.equal(consumer.num_pending + consumer.num_ack_pending, 2);
    assert.equal(total("pressroom_render_queue_lag", queued), 2, "the lag is KEDA's number: pending + ack-pending of render-workers");
    assert.ok(total("pressroom_render_queue_oldest_age", queued) > 0);
    assert.ok(total("pressroom_jobs_sync_fallbacks_total", queued, { kind: "render" }) >= 2);
    assert.equal(total("pressroom_jobs_accepted_total", queued, { kind: "render", mode: "sync" }), 3);
    assert.equal(total("pressroom_jobs_accepted_total", queued, { kind: "render", mode: "async" }), 3);

    // Back up, the pool renders both (the demo key's rate window is spent, so its job is not polled).
    await h.stack.services.restart("render");
    assert.equal((await finished(waited.id, business.apiKey)).status, "succeeded");
    await metricReaches("render", "pressroom_jobs_succeeded_total", { output: "pdf" }, 2);
    assert.equal((await h.api.get("/v1/templates")).status, 200, "the catalog, served by render over gRPC");
    await eventually("the queue drained", async () => (total("pressroom_render_queue_lag", await metricsOf("gateway")) === 0 ? true : undefined), 60_000, 200);

    // Chromium killed under the render service: counted as a crash and a relaunch.
    const renderLog = h.stack.services.processes.get("render")!.output.join("");
    const browserPid = Number([...renderLog.matchAll(/"browserPid":(\d+)/g)].at(-1)?.[1]);
    assert.ok(browserPid > 0, "the render service logged its browser's pid");
    process.kill(browserPid, "SIGKILL");
    await metricReaches("render", "pressroom_render_chromium_crashes_total", {}, 1);
    await metricReaches("render", "pressroom_render_chromium_relaunches_total", {}, 1);

    await metricReaches("webhook", "pressroom_webhook_deliveries_total", { outcome: "delivered" }, 2);
    await metricReaches("webhook", "pressroom_webhook_deliveries_total", { outcome: "gave_up" }, 1);

    for (const name of SERVICE_NAMES) scraped.set(name, await metricsOf(name));
    scraped.set("render", [...firstRender, ...scraped.get("render")!]);
    const of = (name: ServiceName) => scraped.get(name)!;

    const missing: string[] = [];
    for (const metric of documentedMetrics()) {
      const services = metric.services.includes("every service") ? SERVICE_NAMES : (metric.services as ServiceName[]);
      for (const service of services) if (seriesOf(metric.name, of(service)).length === 0) missing.push(`${metric.name} on ${service}`);
    }
    assert.deepEqual(missing, [], "every metric of docs/metrics.md is exported after this traffic");

    const gateway = of("gateway");
    assert.ok(
      total("http_server_request_duration", gateway, { http_route: "/v1/jobs/:id", http_request_method: "GET", http_response_status_class: "2xx" }) >= 4,
    );
    assert.ok(total("http_server_request_duration", gateway, { http_route: "/v1/render", http_response_status_class: "4xx" }) >= 4);
    assert.ok(total("rpc_client_duration", gateway, { rpc_method: "Admit", rpc_grpc_status_code: "OK" }) >= 9);
    assert.ok(total("rpc_server_duration", of("storage"), { rpc_method: "RegisterOutput", rpc_grpc_status_code: "OK" }) >= 4);
    assert.ok(total("rpc_server_duration", of("render"), { rpc_method: "ListTemplates", rpc_grpc_status_code: "OK" }) >= 1);

    const metering = of("metering");
    for (const outcome of ["admitted", "rate_limited", "quota_exceeded", "concurrency_exceeded"]) {
      assert.ok(total("pressroom_admission_decisions_total", metering, { outcome }) >= 1, `an admission decision ${outcome}`);
    }
    assert.equal(total("pressroom_admission_decisions_total", metering, { outcome: "concurrency_exceeded" }), 2);

    // Both render processes: three jobs succeeded on the first, two on the second.
    const render = of("render");
    assert.equal(total("pressroom_jobs_succeeded_total", render, { output: "pdf" }), 5);
    assert.equal(total("pressroom_render_duration", render, { output: "pdf", outcome: "succeeded" }), 5);
    assert.equal(total("pressroom_render_slots", render), 4, "busy + idle is the pool's size, 2 in each process");
    assert.equal(total("pressroom_render_chromium_sandboxed", render), 0, "a local stack's Chromium runs with --no-sandbox, and says so");

    assert.ok(total("pressroom_gateway_outputs_served_total", gateway, { source: "announced" }) >= 1);
    assert.ok(total("pressroom_gateway_outputs_served_total", gateway, { source: "storage" }) >= 1);

    const storage = of("storage");
    assert.ok(total("pressroom_storage_cache_lookups_total", storage, { result: "hit" }) >= 1);
    assert.ok(total("pressroom_storage_cache_lookups_total", storage, { result: "miss" }) >= 1);
    assert.ok(total("pressroom_storage_bytes_stored_total", storage) > total("pressroom_storage_outputs_stored_total", storage));

    const webhook = of("webhook");
    assert.ok(total("pressroom_webhook_deliveries_total", webhook, { outcome: "retried" }) >= 1);
    assert.ok(total("pressroom_webhook_delivery_attempts", webhook) >= 2);
  });

  it("no label carries a key, an id, an e-mail address or a URL, and every label has few values", () => {
    assert.ok(scraped.size === SERVICE_NAMES.length, "the first test scraped every service");
    const values = new Map<string, Set<string>>();
    for (const samples of scraped.values()) {
      for (const sample of samples) {
        for (const [label, value] of Object.entries(sample.labels)) {
          if (!values.has(label)) values.set(label, new Set());
          values.get(label)!.add(value);
        }
      }
    }
    const offending: string[] = [];
    for (const [label, set] of values) {
      if (label === "le" || label === "service_name") continue;
      if (set.size > 40) offending.push(`${label} has ${set.size} values`);
      for (const value of set) {
        const forbidden = /pr_(live|demo|test)_|whsec_|\b(job|out|key)_[0-9a-z]{10,}|@|:\/\/|sig=/.test(value) || ids.some((id) => value.includes(id));
        if (forbidden) offending.push(`${label}="${value}"`);
      }
    }
    assert.deepEqual(offending, []);
  });

  endOfSuiteChecks(() => h);
});

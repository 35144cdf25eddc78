import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import type { ApiResponse } from "./test-support/api";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { busiestProcess, busyRenderSlots, expectRenderFailed } from "./test-support/hostile";
import { scrape, total } from "./test-support/prometheus";
import { eventually } from "./test-support/webhook-receiver";

/** A preview's own deadline here: short, so that a preview stopped by its caller is told from one stopped by its deadline. */
const PREVIEW_DEADLINE_S = 10;
const ANONYMOUS_READS_PER_MINUTE = 40;
const SPIN = "<script>for (;;) {}</script>";

/**
 * The doors issue 39 found open, as hostile as documents: a template's preview (at save, and a
 * preview.png not yet stored) is a render, admitted and counted, stopped by its deadline or its
 * caller; a customer's JSON Schema cannot hold the gateway; reads without a key cannot flood
 * render. Each case names the limit, charges the owner where the render rule says so, and
 * another key is served meanwhile. One running stack.
 */
describe("hostile previews and schemas: admitted, counted, bounded, and nothing holds another key", () => {
  let h: Harness;
  let db: pg.Client;
  let renderPid: number;
  const usage = async (key: string) => {
    const response = await h.api.get("/v1/keys/usage", { key });
    assert.equal(response.status, 200, response.text);
    return response.json as { renders: { used: number }; previews: { used: number; limit: number; remaining: number }; concurrency: { in_flight: number } };
  };
  const template = (id: string, html: string, more: Record<string, unknown> = {}) => ({ id, name: id, output: "pdf", html, sample_data: {}, ...more });
  /** Answers within `ms`, or fails saying the gateway held it. */
  const within = (ms: number, what: string, response: Promise<ApiResponse>) =>
    Promise.race([response, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref())]);

  before(async () => {
    h = await startHarness({
      env: { RENDER_SLOTS: "3" },
      serviceEnv: {
        render: { RENDER_PREVIEW_DEADLINE_MS: String(PREVIEW_DEADLINE_S * 1000) },
        gateway: { ANONYMOUS_READS_PER_MINUTE: String(ANONYMOUS_READS_PER_MINUTE) },
      },
    });
    db = new pg.Client({ connectionString: h.stack.databaseUrl });
    await db.connect();
    renderPid = h.stack.services.processes.get("render")!.child.pid!;
  });
  after(async () => {
    await db?.end();
    await h?.stop();
  });

  it("a save's preview is one of the key's previews, stored: preview.png reads it without rendering or counting; one not stored is rendered once, counted", async () => {
    const { apiKey, keyId } = await h.admin.createKey("free");
    const saved = await h.api.post("/v1/templates", template("card", "<p>{{who}}</p>", { sample_data: { who: "Ada" } }), { key: apiKey });
    assert.equal(saved.status, 201, saved.text);
    const afterSave = await usage(apiKey);
    assert.deepEqual([afterSave.previews.used, afterSave.previews.limit, afterSave.renders.used], [1, 300, 0]);
    for (let i = 0; i < 3; i++) assert.equal((await h.api.get("/v1/templates/card/preview.png", { key: apiKey })).status, 200);
    assert.equal((await usage(apiKey)).previews.used, 1, "stored: reading it counts nothing");
    await db.query("delete from render.previews where owner = $1 and id = 'card'", [keyId]);
    for (let i = 0; i < 3; i++) assert.equal((await h.api.get("/v1/templates/card/preview.png", { key: apiKey })).status, 200);
    assert.equal((await usage(apiKey)).previews.used, 2, "not stored: rendered once, admitted and counted, then stored again");
  });

  it("a key with every slot busy gets 429 CONCURRENCY_EXCEEDED for a save; past its previews, 429 QUOTA_EXCEEDED naming previews", async () => {
    const { apiKey, keyId } = await h.admin.createKey("free");
    const busy = h.api.post("/v1/render", { html: "<script>const t = Date.now(); while (Date.now() - t < 4000) {}</script>", data: {} }, { key: apiKey });
    await eventually("the render holds the free key's one slot", async () => ((await usage(apiKey)).concurrency.in_flight === 1 ? true : undefined), 10_000);
    const refused = await h.api.post("/v1/templates", template("while-busy", "<p>x</p>"), { key: apiKey });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.json.code, "CONCURRENCY_EXCEEDED");
    assert.equal((await busy).status, 200);

    await db.query("update metering.usage_periods set previews_used = 300 where key_id = $1", [keyId]);
    const over = await h.api.post("/v1/templates", template("over", "<p>x</p>"), { key: apiKey });
    assert.equal(over.status, 429, over.text);
    assert.equal(over.json.code, "QUOTA_EXCEEDED");
    assert.match(over.json.hint, /previews/);
    assert.ok(Number(over.headers["retry-after"]) >= 1);
    assert.equal((await h.api.post("/v1/render", { html: "<p>renders have their own quota</p>", data: {} }, { key: apiKey })).status, 200);
  });

  it("a preview that spins fails past its own deadline, RENDER_FAILED, charged, while another key is served; nothing stays busy", async () => {
    const { apiKey } = await h.admin.createKey("business");
    const { apiKey: other } = await h.admin.createKey("business");
    const spinning = h.api.post("/v1/templates", template("spins", SPIN), { key: apiKey });
    const served = await h.api.post("/v1/render", { html: "<p>meanwhile</p>", data: {} }, { key: other });
    assert.equal(served.status, 200, served.text);
    expectRenderFailed(await spinning, new RegExp(`the preview failed: .*${PREVIEW_DEADLINE_S} s deadline`), "spins");
    const after = await usage(apiKey);
    assert.deepEqual([after.previews.used, after.concurrency.in_flight], [1, 0], "the document's fault: charged, its slot free");
    await eventually("no render slot busy", async () => ((await busyRenderSlots(h.stack.ports.health.render)) === 0 ? true : undefined), 10_000, 200);
  });

  it("a preview whose caller goes away stops at once: its renderer exits, its render slot and the key's slot are free, and it is charged", async () => {
    const { apiKey } = await h.admin.createKey("business");
    const body = JSON.stringify(template("abandoned", SPIN));
    const url = new URL("/v1/templates", h.stack.baseUrl);
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: "POST",
      agent: false,
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    });
    req.on("error", () => undefined);
    req.end(body);
    await eventually("the preview renders", async () => ((await busyRenderSlots(h.stack.ports.health.render)) >= 1 ? true : undefined), 10_000, 50);
    const renderer = await busiestProcess(renderPid, 700);
    assert.ok(renderer.ticks > 0, "a Chromium process spins in the preview's script");
    req.destroy();
    // Within less than the preview's own deadline: the cancellation stopped it, not the deadline.
    await eventually(
      "the spinning renderer exited and the render slot is free",
      async () => (!existsSync(`/proc/${renderer.pid}`) && (await busyRenderSlots(h.stack.ports.health.render)) === 0 ? true : undefined),
      (PREVIEW_DEADLINE_S * 1000) / 2,
      100,
    );
    const after = await eventually(
      "the key's slot released",
      async () => {
        const now = await usage(apiKey);
        return now.concurrency.in_flight === 0 ? now : undefined;
      },
      5_000,
    );
    assert.equal(after.previews.used, 1, "its caller went away: charged");
    assert.equal((await h.api.get("/v1/templates/abandoned", { key: apiKey })).status, 404, "nothing was stored");
  });

  it("a customer's exponential pattern (33 a's and a '!' took 37 s) answers at once, and does not hold the gateway from other keys", async () => {
    const { apiKey } = await h.admin.createKey("business");
    const { apiKey: other } = await h.admin.createKey("business");
    const schema = { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } };
    const saved = await h.api.post("/v1/templates", template("redos", "<p>{{s}}</p>", { data_schema: schema, sample_data: { s: "aaa" } }), { key: apiKey });
    assert.equal(saved.status, 201, saved.text);
    const hostile = within(
      20_000,
      "the hostile render",
      h.api.post("/v1/render", { template_id: "redos", data: { s: `${"a".repeat(40)}!` } }, { key: apiKey }),
    );
    const [served, live] = await Promise.all([
      within(20_000, "another key's render", h.api.post("/v1/render", { html: "<p>meanwhile</p>", data: {} }, { key: other })),
      within(20_000, "/livez", h.api.get("/livez")),
    ]);
    assert.deepEqual([served.status, live.status], [200, 200]);
    const refused = await hostile;
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.json.error, /^data\.s: must match pattern/);
    assert.equal((await usage(apiKey)).renders.used, 0, "refused before admission: no quota unit");
  });

  it("refuses at save a data_schema past the schema budget, naming the keyword", async () => {
    const { apiKey } = await h.admin.createKey("business");
    const schema = { type: "object", properties: { tags: { type: "array", uniqueItems: true } } };
    const refused = await h.api.post("/v1/templates", template("unbounded", "<p>x</p>", { data_schema: schema }), { key: apiKey });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.json.code, "PAYLOAD_INVALID");
    assert.match(refused.json.error, /^data_schema\.properties\.tags\.uniqueItems: needs a maxItems/);
    assert.equal((await usage(apiKey)).previews.used, 0, "refused before its preview was admitted");
  });

  it("reads without a key are kept and limited per address: a flood gets 429 and reaches render at most once; other addresses and keys are served", async () => {
    const listed = async () => total("rpc_server_duration", await scrape(h.stack.ports.health.render), { rpc_method: "ListTemplates" });
    const before = await listed();
    const flood = await Promise.all(Array.from({ length: ANONYMOUS_READS_PER_MINUTE + 20 }, () => h.api.get("/v1/templates", { localAddress: "127.0.0.3" })));
    const answered = flood.filter((r) => r.status === 200).length;
    const limited = flood.filter((r) => r.status === 429);
    assert.equal(answered, ANONYMOUS_READS_PER_MINUTE);
    assert.equal(limited.length, 20);
    assert.equal(limited[0]!.json.code, "RATE_LIMITED");
    assert.ok(Number(limited[0]!.headers["retry-after"]) >= 1);
    assert.ok((await listed()) - before <= 1, "the answers were kept: render listed the catalog at most once");
    assert.equal((await h.api.get("/v1/templates/invoice/preview.png", { localAddress: "127.0.0.4" })).status, 200, "another address is served");
    const { apiKey } = await h.admin.createKey("business");
    assert.equal(
      (await h.api.get("/v1/templates", { key: apiKey, localAddress: "127.0.0.3" })).status,
      200,
      "a keyed read from that address has its key's limit",
    );
  });

  endOfSuiteChecks(() => h);
});

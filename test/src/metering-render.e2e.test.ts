import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { waitFor } from "@pressroom/stack";
import { errorShape, type ApiResponse } from "./test-support/api";
import { startHarness, type Harness } from "./test-support/harness";

/**
 * Slots and quota through the real pipeline (needs the render pool and
 * Chromium): a sync render holds its slot while it renders and gives it back
 * with its terminal event; the unit it took stays taken.
 */

const page = (i: number) => ({ html: "<h1>Hello {{n}}</h1>", data: { n: i } });
/** A document that keeps its render busy for a second and a half, so that parallel requests overlap however loaded the machine is. */
const slowPage = (i: number) => ({ html: "<h1>Hello {{n}}</h1><script>const t = Date.now(); while (Date.now() - t < 1500) {}</script>", data: { n: i } });

describe("concurrency slots through real renders", () => {
  let h: Harness;

  before(async () => {
    h = await startHarness();
  });

  after(async () => {
    await h?.stop();
  });

  const usage = async (apiKey: string) => (await h.api.get("/v1/keys/usage", { key: apiKey })).json;

  it("parallel sync renders over the plan's slots: exactly that many render, the rest are 429 CONCURRENCY_EXCEEDED", async () => {
    const { apiKey } = await h.admin.createKey("starter");
    const responses: ApiResponse[] = await Promise.all(Array.from({ length: 6 }, (_, i) => h.api.post("/v1/render", slowPage(i), { key: apiKey })));
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    assert.equal(ok.length, 2, responses.map((r) => `${r.status} ${r.text.slice(0, 120)}`).join("\n"));
    assert.equal(refused.length, 4);
    for (const r of refused) {
      assert.equal(errorShape(r).code, "CONCURRENCY_EXCEEDED");
      assert.ok(Number(r.headers["retry-after"]) >= 1);
    }
    await waitFor("slots freed by job.succeeded", async () => (await usage(apiKey)).concurrency.in_flight === 0, 10_000);
    assert.deepEqual((await usage(apiKey)).renders, { used: 2, limit: 1_000, remaining: 998 });
  });

  it("one render at a time, one after another: each finds the previous one's slot freed", async () => {
    const { apiKey } = await h.admin.createKey("free");
    const statuses: string[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await h.api.post("/v1/render", page(i), { key: apiKey });
      statuses.push(response.status === 200 ? "200" : `${response.status} ${response.text}`);
    }
    assert.deepEqual(statuses, ["200", "200", "200", "200"]);
    await waitFor("slot freed", async () => (await usage(apiKey)).concurrency.in_flight === 0, 10_000);
    assert.equal((await usage(apiKey)).renders.used, 4);
  });
});

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { PLANS } from "@pressroom/domain";
import { pngPixel } from "@pressroom/render/postprocess";
import { waitFor } from "@pressroom/stack";
import pg from "pg";
import { errorShape, type ApiResponse } from "./test-support/api";
import { startHarness, type Harness } from "./test-support/harness";
import { pdfText } from "./test-support/pdf";

/**
 * Slots and quota through the real pipeline (needs the render pool and
 * Chromium): a sync render holds its slot while it renders and gives it back
 * with its terminal event; the unit it took stays taken. Test mode (issue 46): stamped on every
 * page, counted against the day's test allowance, never the month's renders.
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

  describe("test mode", () => {
    /** Two pages whose CSS tries every way to hide what is drawn over them. */
    const HIDING = `<!doctype html><html lang="en"><head><style>
      @page { margin: 0 } html, body, *, *::before, *::after { visibility: hidden !important; opacity: 0 !important }
      </style></head><body><p>Page {{n}}</p><p style="break-before: page">Page two</p></body></html>`;
    const download = async (response: ApiResponse): Promise<Buffer> => {
      assert.equal(response.status, 200, response.text);
      const url = new URL(response.json.url as string);
      const got = await h.api.get(`${url.pathname}${url.search}`);
      assert.equal(got.status, 200);
      return got.body;
    };

    it("stamps TEST on every page of a PDF whatever its CSS, counts test not renders, and the job says test: true", async () => {
      const { apiKey } = await h.admin.createKey("starter");
      const rendered = await h.api.post("/v1/render", { html: HIDING, data: { n: 1 }, test: true }, { key: apiKey });
      const pages = pdfText(await download(rendered))
        .split("\f")
        .filter((page) => page.trim());
      assert.equal(pages.length, 2, "both pages are there");
      for (const page of pages) assert.match(page, /TEST/, "the stamp is on every page");
      const merged = await h.api.post(
        "/v1/render",
        { documents: [{ html: "<p>One</p>" }, { html: "<p>Two</p>" }, { html: HIDING, data: { n: 3 } }], test: true },
        { key: apiKey },
      );
      const mergedPages = pdfText(await download(merged))
        .split("\f")
        .filter((page) => page.trim());
      assert.equal(mergedPages.length, 4);
      for (const page of mergedPages) assert.match(page, /TEST/, "every page of a merged document");

      const job = (await h.api.get(`/v1/jobs/${rendered.json.id as string}`, { key: apiKey })).json;
      assert.equal(job.test, true);
      const plain = await h.api.post("/v1/render", { html: "<p>Real</p>", data: {} }, { key: apiKey });
      assert.doesNotMatch(pdfText(await download(plain)), /TEST/, "without test, no stamp");
      assert.equal((await h.api.get(`/v1/jobs/${plain.json.id as string}`, { key: apiKey })).json.test, undefined);

      await waitFor("slots freed", async () => (await usage(apiKey)).concurrency.in_flight === 0, 10_000);
      const after = await usage(apiKey);
      assert.deepEqual(after.test, { used: 4, limit: PLANS.starter.testRendersPerDay, remaining: PLANS.starter.testRendersPerDay - 4 }, "1 + 3 parts");
      assert.equal(after.renders.used, 1, "only the render without test counted against the month");
    });

    it("stamps a test image across its middle", async () => {
      const { apiKey } = await h.admin.createKey("starter");
      const body = { template_id: "og-image", data: { headline: "Stamped", site_name: "Pressroom" } };
      const real = await download(await h.api.post("/v1/image", body, { key: apiKey }));
      const test = await download(await h.api.post("/v1/image", { ...body, test: true }, { key: apiKey }));
      const { width, height } = await pngPixel(test, 0, 0);
      const edge = (await pngPixel(test, 1, Math.floor(height / 2))).rgb;
      assert.ok(edge[0] > 150 && edge[1] < 110 && edge[2] < 110, `the band is red at the middle of the left edge: ${edge.join(",")}`);
      assert.notDeepEqual((await pngPixel(real, 1, Math.floor(height / 2))).rgb, edge, "the unstamped image has no band there");
      assert.ok(width > 0);
      assert.equal((await usage(apiKey)).test.used, 1);
      assert.equal((await usage(apiKey)).renders.used, 1);
    });

    it("past the day's allowance: 429 QUOTA_EXCEEDED naming test mode's daily allowance and its reset; renders go on", async () => {
      const { apiKey, keyId } = await h.admin.createKey("free");
      const db = new pg.Client({ connectionString: h.stack.databaseUrl });
      await db.connect();
      try {
        await db.query("insert into metering.test_days (key_id, day, used) values ($1, (clock_timestamp() at time zone 'UTC')::date, $2)", [
          keyId,
          PLANS.free.testRendersPerDay,
        ]);
      } finally {
        await db.end();
      }
      const refused = await h.api.post("/v1/render", { html: "<p>x</p>", data: {}, test: true }, { key: apiKey });
      assert.equal(refused.status, 429, refused.text);
      const error = errorShape(refused);
      assert.equal(error.code, "QUOTA_EXCEEDED");
      assert.match(error.error, /test mode's daily allowance/);
      assert.match(
        error.hint,
        new RegExp(`Test mode's daily allowance \\(${PLANS.free.testRendersPerDay} a day on the free plan\\).*00:00 UTC \\(\\d{4}-\\d\\d-\\d\\dT00:00:00Z`),
      );
      const retryAfter = Number(refused.headers["retry-after"]);
      assert.ok(retryAfter >= 1 && retryAfter <= 86_400, `Retry-After ${retryAfter}: until midnight UTC`);
      assert.deepEqual((await usage(apiKey)).test, { used: PLANS.free.testRendersPerDay, limit: PLANS.free.testRendersPerDay, remaining: 0 });
      assert.equal((await h.api.post("/v1/render", { html: "<p>x</p>", data: {} }, { key: apiKey })).status, 200, "the monthly quota is apart");
    });
  });
});

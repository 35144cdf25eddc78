import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Pressroom, PressroomError } from "@pressroom/client";
import pg from "pg";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { pngSize } from "./test-support/pdf";

/** An image template that paints its sample data's colour: two versions that differ show it in their previews. */
const card = (colour: string, more: Record<string, unknown> = {}) => ({
  name: "Card",
  output: "png" as const,
  width: 120,
  height: 80,
  html: '<body style="margin:0;background:{{colour}}"><p>{{colour}}</p></body>',
  data_schema: { type: "object", required: ["colour"], properties: { colour: { type: "string" } } },
  sample_data: { colour },
  ...more,
});

/**
 * Issue 41's draft preview (POST /v1/templates/preview: the console editor's live preview) and
 * 46.11's per-version previews (GET /v1/templates/{id}/versions/{n}/preview.png, each version
 * keeping its own, and preview_url pointing to it), against the running stack.
 */
describe("template previews: an unsaved draft's, and each version's own", () => {
  let h: Harness;
  let db: pg.Client;
  const previewsUsed = async (key: string): Promise<number> => {
    const response = await h.api.get("/v1/keys/usage", { key });
    assert.equal(response.status, 200, response.text);
    return (response.json as { previews: { used: number } }).previews.used;
  };
  const storedPreviews = async (owner: string): Promise<{ id: string; version: number }[]> =>
    (await db.query<{ id: string; version: number }>("select id, version from render.previews where owner = $1 order by id, version", [owner])).rows;

  before(async () => {
    h = await startHarness();
    db = new pg.Client({ connectionString: h.stack.databaseUrl });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await h?.stop();
  });

  it("POST /v1/templates/preview answers the draft's PNG with its sample data, counted as one preview; nothing is stored", async () => {
    const { apiKey, keyId } = await h.admin.createKey("free");
    const response = await h.api.post("/v1/templates/preview", card("rgb(255, 0, 0)"), { key: apiKey });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers["content-type"], "image/png");
    assert.equal(response.headers["cache-control"], "no-store");
    assert.deepEqual(pngSize(response.body), { width: 120, height: 80 });
    assert.equal(await previewsUsed(apiKey), 1, "admitted and counted like any preview");

    // With an id, as POST /v1/templates takes it: still nothing is made.
    const named = await h.api.post("/v1/templates/preview", card("blue", { id: "draft-card" }), { key: apiKey });
    assert.equal(named.status, 200, named.text);
    assert.notDeepEqual(named.body, response.body, "the draft's own sample data is rendered");
    assert.equal(await previewsUsed(apiKey), 2);
    assert.equal((await h.api.get("/v1/templates/draft-card", { key: apiKey })).status, 404);
    const listed = (await h.api.get("/v1/templates", { key: apiKey })).json as { templates: { visibility: string }[] };
    assert.equal(listed.templates.filter((t) => t.visibility === "private").length, 0);
    assert.deepEqual(await storedPreviews(keyId), []);

    // The JavaScript client's helper answers the same bytes' kind.
    const client = new Pressroom({ apiKey, baseUrl: h.stack.baseUrl });
    assert.deepEqual(pngSize(await client.previewTemplate(card("green"))), { width: 120, height: 80 });
    assert.equal(await previewsUsed(apiKey), 3);
  });

  it("a draft refused answers 422 before it is admitted: a source that does not compile names its line, sample data its field", async () => {
    const { apiKey } = await h.admin.createKey("free");
    const broken = await h.api.post(
      "/v1/templates/preview",
      card("red", { html: "<body>\n  <h1>{{title}}</h1>\n  {{#each items}}\n    <p>{{this}}</p>\n</body>\n" }),
      { key: apiKey },
    );
    assert.equal(broken.status, 422, broken.text);
    assert.equal(broken.json.code, "PAYLOAD_INVALID");
    assert.match(broken.json.error, /^html: does not compile at line \d+, column \d+/);
    const unclosed = await h.api.post("/v1/templates/preview", card("red", { html: "<p>one</p>\n<p>two</p>\n<p>{{#if x}</p>\n" }), { key: apiKey });
    assert.equal(unclosed.status, 422, unclosed.text);
    assert.match(unclosed.json.error, /^html: does not compile at line 3, column \d+/);

    const invalidSample = await h.api.post("/v1/templates/preview", card("red", { sample_data: { colour: 7 } }), { key: apiKey });
    assert.equal(invalidSample.status, 422, invalidSample.text);
    assert.match(invalidSample.json.error, /^sample_data/);
    assert.equal(await previewsUsed(apiKey), 0, "a refused draft counts nothing");

    const client = new Pressroom({ apiKey, baseUrl: h.stack.baseUrl });
    const error = await client.previewTemplate(card("red", { html: "<p>{{#if x}</p>" })).then(
      () => assert.fail("a source that does not compile is refused"),
      (err: unknown) => err,
    );
    assert.ok(error instanceof PressroomError);
    assert.deepEqual([error.status, error.code], [422, "PAYLOAD_INVALID"]);
    assert.match(error.message, /line 1, column/);
  });

  it("a draft past the month's previews is refused 429 QUOTA_EXCEEDED naming previews; a draft that fails to render is RENDER_FAILED, charged", async () => {
    const { apiKey, keyId } = await h.admin.createKey("free");
    const failing = await h.api.post("/v1/templates/preview", card("red", { html: "<script>throw new Error('draft fails')</script>" }), { key: apiKey });
    assert.equal(failing.status, 422, failing.text);
    assert.equal(failing.json.code, "RENDER_FAILED");
    assert.equal(await previewsUsed(apiKey), 1, "the document's fault: charged");

    await db.query("update metering.usage_periods set previews_used = 300 where key_id = $1", [keyId]);
    const over = await h.api.post("/v1/templates/preview", card("red"), { key: apiKey });
    assert.equal(over.status, 429, over.text);
    assert.equal(over.json.code, "QUOTA_EXCEEDED");
    assert.match(over.json.hint, /previews/);
  });

  it("each version keeps its own preview at /versions/{n}/preview.png, where its preview_url points; reading them counts nothing", async () => {
    // A plan whose rate limit lets this test's many reads through in a minute.
    const { apiKey, keyId } = await h.admin.createKey("business");
    const { apiKey: otherKey } = await h.admin.createKey("free");
    const created = await h.api.post("/v1/templates", card("rgb(255, 0, 0)", { id: "card" }), { key: apiKey });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.preview_url, "/v1/templates/card/versions/1/preview.png");
    const replaced = await h.api.request("PUT", "/v1/templates/card", { key: apiKey, json: card("rgb(0, 0, 255)") });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.json.preview_url, "/v1/templates/card/versions/2/preview.png");
    assert.equal((await h.api.get("/v1/templates/card/versions/1", { key: apiKey })).json.preview_url, "/v1/templates/card/versions/1/preview.png");
    assert.deepEqual(await storedPreviews(keyId), [
      { id: "card", version: 1 },
      { id: "card", version: 2 },
    ]);
    assert.equal(await previewsUsed(apiKey), 2, "one per save");

    const first = await h.api.get("/v1/templates/card/versions/1/preview.png", { key: apiKey });
    const second = await h.api.get(replaced.json.preview_url as string, { key: apiKey });
    assert.equal(first.status, 200, first.text);
    assert.equal(second.status, 200, second.text);
    assert.equal(first.headers["content-type"], "image/png");
    assert.equal(first.headers.etag, '"card-v1"');
    assert.equal(second.headers.etag, '"card-v2"');
    assert.notDeepEqual(first.body, second.body, "each version's own sample data");
    assert.deepEqual((await h.api.get("/v1/templates/card/preview.png", { key: apiKey })).body, second.body, "the current version's is version 2's");
    const client = new Pressroom({ apiKey, baseUrl: h.stack.baseUrl });
    assert.deepEqual(Buffer.from(await client.templatePreview("card", 1)), first.body);
    assert.equal(await previewsUsed(apiKey), 2, "stored: reading them renders and counts nothing");

    // A version whose preview is not stored (saved before versions kept theirs) is rendered once, counted, then kept.
    await db.query("delete from render.previews where owner = $1 and version = 1", [keyId]);
    const again = await h.api.get("/v1/templates/card/versions/1/preview.png", { key: apiKey });
    assert.equal(again.status, 200, again.text);
    assert.equal(await previewsUsed(apiKey), 3);
    assert.equal((await storedPreviews(keyId)).length, 2);

    for (const [path, code] of [
      ["/v1/templates/card/versions/3/preview.png", "TEMPLATE_VERSION_NOT_FOUND"],
      ["/v1/templates/card/versions/0/preview.png", "TEMPLATE_NOT_FOUND"],
      ["/v1/templates/card/versions/x/preview.png", "TEMPLATE_NOT_FOUND"],
    ]) {
      const missing = await h.api.get(path!, { key: apiKey });
      assert.equal(missing.status, 404, `${path}: ${missing.text}`);
      assert.equal(missing.json.code, code);
    }
    const foreign = await h.api.get("/v1/templates/card/versions/1/preview.png", { key: otherKey });
    assert.equal(foreign.status, 404, "another key's template version answers like a missing one");
    assert.equal(foreign.json.code, "TEMPLATE_NOT_FOUND");
    assert.equal((await h.api.get("/v1/templates/invoice/versions/1/preview.png")).status, 200, "the public catalog's versions have theirs too");
  });

  endOfSuiteChecks(() => h);
});

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { errorShape, type ApiResponse } from "./test-support/api";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { pdfInfo, pdfText } from "./test-support/pdf";

/**
 * An own template's default options (issue 46, item 11) against the whole running system: saved with each
 * version, answered with it, rendered under the request's own options (the request winning field by field,
 * nested objects per key), refused 422 naming the option when they, or their merge with a request's, are invalid.
 */

const memo = (options: Record<string, unknown>) => ({
  name: "Memo",
  output: "pdf",
  html: "<html><body><h1>Memo for {{who}}</h1></body></html>",
  data_schema: { type: "object", properties: { who: { type: "string" } }, required: ["who"] },
  sample_data: { who: "Sample" },
  options,
});

const DEFAULTS = {
  footer_html: '<div style="font-size: 10px; width: 100%; text-align: center">Default footer for {{who}}</div>',
  margin: { top: "2cm", bottom: "2cm" },
  metadata: { title: "Default title", author: "Ada Lovelace" },
};

function expectError(response: ApiResponse, status: number, code: string): { error: string; code: string; hint: string } {
  assert.equal(response.status, status, `expected ${status} ${code}, got ${response.status} ${response.text}`);
  const body = errorShape(response);
  assert.equal(body.code, code, response.text);
  return body;
}

describe("own templates' default options (full stack)", () => {
  let h: Harness;
  let key: string;

  /** A render of a memo template: the PDF's text and its document information. */
  async function renderMemoOf(templateId: string, body: Record<string, unknown> = {}): Promise<{ text: string; info: Record<string, string> }> {
    const response = await h.api.post("/v1/render", { template_id: templateId, data: { who: "Grace" }, ...body }, { key });
    assert.equal(response.status, 200, response.text);
    const pdf = (await h.api.download(response.json.url)).body;
    return { text: pdfText(pdf), info: pdfInfo(pdf) };
  }
  const renderMemo = (body: Record<string, unknown> = {}) => renderMemoOf("memo", body);

  before(async () => {
    h = await startHarness();
    key = (await h.admin.createKey("business")).apiKey;
  });

  after(async () => {
    await h?.stop();
  });

  it("saves them with the version and answers them with it", async () => {
    const created = await h.api.post("/v1/templates", { id: "memo", ...memo(DEFAULTS) }, { key });
    assert.equal(created.status, 201, created.text);
    const current = await h.api.get("/v1/templates/memo", { key });
    assert.equal(current.status, 200, current.text);
    assert.deepEqual(current.json.options, DEFAULTS);
    assert.deepEqual((await h.api.get("/v1/templates/memo/versions/1", { key })).json.options, DEFAULTS);
  });

  it("renders with them; a request's option overrides its field only, nested objects per key", async () => {
    const plain = await renderMemo();
    assert.match(plain.text, /Memo for Grace/);
    assert.match(plain.text, /Default footer for Grace/);
    assert.equal(plain.info.Title, "Default title");
    assert.equal(plain.info.Author, "Ada Lovelace");

    const titled = await renderMemo({ options: { metadata: { title: "Request title" } } });
    assert.equal(titled.info.Title, "Request title", "the request's title wins");
    assert.equal(titled.info.Author, "Ada Lovelace", "the template's author stays beside it");
    assert.match(titled.text, /Default footer for Grace/, "and so does the template's footer");

    const footed = await renderMemo({ options: { footer_html: '<div style="font-size: 10px">Request footer</div>' } });
    assert.match(footed.text, /Request footer/);
    assert.doesNotMatch(footed.text, /Default footer/);
    assert.equal(footed.info.Title, "Default title");
  });

  it("a new version has its own; a pinned version renders with its own", async () => {
    const replaced = await h.api.request("PUT", "/v1/templates/memo", { key, json: memo({ metadata: { title: "Second title" } }) });
    assert.equal(replaced.status, 200, replaced.text);
    const current = await h.api.get("/v1/templates/memo", { key });
    assert.deepEqual(current.json.options, { metadata: { title: "Second title" } });
    const second = await renderMemo();
    assert.equal(second.info.Title, "Second title");
    assert.doesNotMatch(second.text, /Default footer/);
    const pinned = await renderMemo({ template_version: 1 });
    assert.equal(pinned.info.Title, "Default title");
    assert.match(pinned.text, /Default footer for Grace/);
  });

  it("a template without options answers {}", async () => {
    const created = await h.api.post("/v1/templates", { id: "bare", ...memo({}), options: undefined }, { key });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual((await h.api.get("/v1/templates/bare", { key })).json.options, {});
  });

  it("a png template's options are an image's: its default format makes the image", async () => {
    const card = { name: "Card", output: "png", html: "<p>{{who}}</p>", width: 300, height: 200, options: { format: "jpeg", quality: 70 } };
    const created = await h.api.post("/v1/templates", { id: "card", ...card }, { key });
    assert.equal(created.status, 201, created.text);
    const image = await h.api.post("/v1/image", { template_id: "card", data: { who: "Grace" } }, { key });
    assert.equal(image.status, 200, image.text);
    assert.equal(image.json.content_type, "image/jpeg");
    const png = await h.api.post("/v1/image", { template_id: "card", data: { who: "Grace" }, options: { format: "png" } }, { key });
    expectError(png, 422, "PAYLOAD_INVALID");
    assert.match(errorShape(png).error, /^options\.quality: quality applies to jpeg and webp only \(.*"card"'s default options\)$/);
  });

  const invalid: [string, Record<string, unknown>, RegExp][] = [
    ["a margin that is not a CSS length", { id: "bad-margin", ...memo({ margin: { top: "1em" } }) }, /^options\.margin\.top: /],
    ["an unknown option", { id: "bad-option", ...memo({ colour: "red" }) }, /^options: unknown option: colour$/],
    ["an image's option on a pdf template", { id: "bad-quality", ...memo({ quality: 70 }) }, /^options: unknown option: quality$/],
    [
      "a url's size on a png template",
      { id: "bad-size", name: "Card", output: "png", html: "<p>x</p>", width: 300, height: 200, options: { width: 800 } },
      /^options\.width: applies to a url only/,
    ],
  ];
  for (const [what, body, message] of invalid) {
    it(`422 PAYLOAD_INVALID for ${what}, naming the option`, async () => {
      const error = expectError(await h.api.post("/v1/templates", body, { key }), 422, "PAYLOAD_INVALID");
      assert.match(error.error, message);
      assert.ok(error.hint.length > 0);
    });
  }

  it("a request's paper size replaces the template's, whichever way either gives it", async () => {
    const created = await h.api.post("/v1/templates", { id: "letter-paper", ...memo({ format: "Letter" }) }, { key });
    assert.equal(created.status, 201, created.text);
    const letter = await renderMemoOf("letter-paper");
    assert.match(letter.info["Page size"]!, /^612 x 792 pts/, "the template's Letter");
    const sized = await renderMemoOf("letter-paper", { options: { width: "5in", height: "7in" } });
    assert.match(sized.info["Page size"]!, /^360 x 504 pts/, "the request's 5 × 7 in");
  });

  it("a request whose options make an invalid combination with the template's is refused, naming the option, in a batch too", async () => {
    const created = await h.api.post("/v1/templates", { id: "archival", ...memo({ pdfa: "PDF/A-2b" }) }, { key });
    assert.equal(created.status, 201, created.text);
    const tagged = { template_id: "archival", data: { who: "Grace" }, options: { pdfua: true } };
    const error = expectError(await h.api.post("/v1/render", tagged, { key }), 422, "PAYLOAD_INVALID");
    assert.match(error.error, /^options\.pdfua: PDF\/A and PDF\/UA cannot be combined yet: give pdfa or pdfua, not both \(.*"archival"'s default options\)$/);
    assert.match(error.hint, /GET \/v1\/templates\/archival/);
    const batch = expectError(await h.api.post("/v1/batches", { items: [tagged] }, { key }), 422, "PAYLOAD_INVALID");
    assert.match(batch.error, /^items\[0\]\.options\.pdfua: PDF\/A and PDF\/UA cannot be combined yet/);
  });

  endOfSuiteChecks(() => h);
});

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Pressroom } from "@pressroom/client";
import { pdfText } from "../../services/render/src/test-support/engine";
import { errorShape, type ApiResponse } from "./test-support/api";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { eventually } from "./test-support/webhook-receiver";

/**
 * One round trip: a sync render whose Accept header asks for the document
 * gets the document itself, with what the JSON would have said in headers;
 * the output is stored as usual, JSON stays the default, errors stay JSON,
 * and a webhook job ignores the header.
 */
describe("sync renders answered with the document (Accept)", () => {
  let h: Harness;
  let apiKey: string;

  before(async () => {
    h = await startHarness();
    apiKey = (await h.admin.createKey("pro")).apiKey;
  });

  after(async () => {
    await h?.stop();
  });

  const invoice = { html: "<h1>Invoice {{n}}</h1>", data: { n: "A-17" } };
  const post = (path: string, body: unknown, accept?: string, headers: Record<string, string> = {}): Promise<ApiResponse> =>
    h.api.post(path, body, { key: apiKey, headers: { ...(accept ? { accept } : {}), ...headers } });

  it("answers a PDF with the job, its signed URL and expiry in headers, and the URL serves the same bytes", async () => {
    const response = await post("/v1/render", invoice, "application/pdf");
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers["content-type"], "application/pdf");
    assert.equal(Number(response.headers["content-length"]), response.body.length);
    assert.match(response.headers["content-disposition"] ?? "", /^inline; filename=".*\.pdf"/);
    assert.equal(response.body.subarray(0, 5).toString("latin1"), "%PDF-");
    assert.match(pdfText(response.body), /Invoice A-17/);

    const jobId = response.headers["pressroom-job-id"]!;
    assert.match(jobId, /^job_[0-9a-z]{26}$/);
    assert.ok(Date.parse(response.headers["pressroom-expires-at"]!) > Date.now());
    const url = new URL(response.headers["content-location"]!);
    const download = await h.api.get(`${url.pathname}${url.search}`);
    assert.equal(download.status, 200);
    assert.deepEqual(download.body, response.body, "the stored output is the document answered");

    const job = (await h.api.get(`/v1/jobs/${jobId}`, { key: apiKey })).json;
    assert.equal(job.status, "succeeded");
    assert.deepEqual(
      job.events.map((e: { type: string }) => e.type),
      ["job.accepted", "job.started", "job.succeeded"],
      "the job's events are the same as for a JSON answer",
    );
  });

  it("answers a PNG for an image when Accept asks for image/png", async () => {
    const response = await post("/v1/image", { template_id: "og-image", data: { headline: "One round trip", site_name: "Pressroom" } }, "image/png");
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers["content-type"], "image/png");
    assert.deepEqual([...response.body.subarray(1, 4)], [...Buffer.from("PNG")]);
    assert.ok(response.headers["pressroom-job-id"] && response.headers["content-location"]);
  });

  it("keeps JSON the default: no Accept, a wildcard, JSON first, or another document type", async () => {
    for (const accept of [undefined, "*/*", "application/json, application/pdf;q=0.5", "image/png", "text/html"]) {
      const response = await post("/v1/render", invoice, accept);
      assert.equal(response.status, 200, `${accept}: ${response.text}`);
      assert.match(response.headers["content-type"] ?? "", /^application\/json/, String(accept));
      assert.equal(response.json.status, "succeeded");
      assert.equal(response.headers["pressroom-job-id"], response.json.id, "a JSON answer names its job too");
    }
  });

  it("answers errors in the three-field JSON shape even when Accept asks for the document", async () => {
    const missing = await post("/v1/render", { template_id: "no-such-template", data: {} }, "application/pdf");
    assert.equal(missing.status, 404);
    assert.match(missing.headers["content-type"] ?? "", /^application\/json/);
    assert.equal(errorShape(missing).code, "TEMPLATE_NOT_FOUND");

    const failing = await post("/v1/render", { html: "<script>throw new Error('boom')</script>", data: {} }, "application/pdf");
    assert.equal(failing.status, 422, failing.text);
    assert.equal(errorShape(failing).code, "RENDER_FAILED");
  });

  it("ignores Accept for a job with a webhook_url: 202 JSON at once", async () => {
    const response = await post("/v1/render", { ...invoice, webhook_url: "https://hooks.example.com/pressroom" }, "application/pdf");
    assert.equal(response.status, 202, response.text);
    assert.match(response.headers["content-type"] ?? "", /^application\/json/);
    assert.equal(response.json.status, "queued");
  });

  it("answers a replay with the same Idempotency-Key with the same document, or the JSON it stands for", async () => {
    const key = { "idempotency-key": `doc-${Date.now()}` };
    const first = await post("/v1/render", invoice, "application/pdf", key);
    assert.equal(first.status, 200, first.text);
    const again = await post("/v1/render", invoice, "application/pdf", key);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.headers["idempotent-replayed"], "true");
    assert.equal(again.headers["pressroom-job-id"], first.headers["pressroom-job-id"]);
    assert.deepEqual(again.body, first.body);
    const asJson = await post("/v1/render", invoice, undefined, key);
    assert.equal(asJson.json.id, first.headers["pressroom-job-id"]);
    assert.equal(asJson.json.url, first.headers["content-location"]);
  });

  it("the Node client gets the document in one request", async () => {
    const client = new Pressroom({ apiKey, baseUrl: h.stack.baseUrl });
    const document = await client.renderDocument(invoice);
    assert.ok(document.status === "succeeded", JSON.stringify(document));
    assert.match(pdfText(Buffer.from(document.bytes)), /Invoice A-17/);
    assert.equal(document.content_type, "application/pdf");
    assert.equal((await client.job(document.id)).status, "succeeded");
    assert.deepEqual(Buffer.from(await client.download(document.url)), Buffer.from(document.bytes));
  });

  it("serves a sync job's URL from the gateway that answered it while storage is down, and no other URL", async () => {
    const answered = await post("/v1/render", invoice);
    assert.equal(answered.status, 200, answered.text);
    const url = new URL(answered.json.url);
    const path = `${url.pathname}${url.search}`;
    const sig = url.searchParams.get("sig")!;
    const forged = new URL(url);
    forged.searchParams.set("sig", `${sig[0] === "a" ? "b" : "a"}${sig.slice(1)}`);
    const forgedPath = `${forged.pathname}${forged.search}`;
    await h.stack.services.kill("storage");
    try {
      const download = await h.api.get(path);
      assert.equal(download.status, 200, download.text);
      assert.equal(download.headers["content-type"], "application/pdf");
      assert.equal(Number(download.headers["content-length"]), answered.json.size_bytes);
      assert.match(download.headers["content-disposition"] ?? "", /^inline; filename=".*\.pdf"/);
      assert.match(pdfText(download.body), /Invoice A-17/);
      assert.equal(download.headers["accept-ranges"], "bytes");
      // A range of it, from the gateway's copy too.
      const part = await h.api.get(path, { headers: { range: "bytes=-9" } });
      assert.equal(part.status, 206, part.text);
      const size = download.body.length;
      assert.equal(part.headers["content-range"], `bytes ${size - 9}-${size - 1}/${size}`);
      assert.deepEqual(part.body, download.body.subarray(size - 9));
      const past = await h.api.get(path, { headers: { range: `bytes=${size}-` } });
      assert.equal(past.status, 416, past.text);
      assert.equal(errorShape(past).code, "RANGE_NOT_SATISFIABLE");
      // Any other signature goes to storage, the only one that can check it: down, so no document.
      const other = await h.api.get(forgedPath);
      assert.equal(other.status, 500, other.text);
      assert.equal(errorShape(other).code, "INTERNAL_ERROR");
    } finally {
      await h.stack.services.restart("storage");
    }
    // Once the gateway has reconnected (gRPC reconnect backoff), storage refuses the forged signature.
    const refused = await eventually(
      "storage answers again",
      async () => {
        const response = await h.api.get(forgedPath);
        return response.status === 500 ? undefined : response;
      },
      20_000,
      250,
    );
    assert.equal(refused.status, 403, refused.text);
    assert.equal(errorShape(refused).code, "URL_INVALID");
  });

  endOfSuiteChecks(() => h);
});

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Pressroom } from "@pressroom/client";
import pg from "pg";
import { pdfText } from "../../services/render/src/test-support/engine";
import { errorShape, type ApiResponse } from "./test-support/api";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { eventually } from "./test-support/webhook-receiver";

/**
 * One round trip: a sync render whose Accept header asks for the document
 * gets the document itself, with what the JSON would have said in headers;
 * the output is stored as usual, JSON stays the default, errors stay JSON,
 * and a webhook job ignores the header. And the output under the customer's
 * control: its lifetime, its job's freshly signed URL, its deletion, which
 * the gateway that was announced the output honours too.
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

  it("an output lives as long as options.output_ttl_seconds asks, within the plan; its job signs its URL afresh until it is deleted", async () => {
    const answered = await post("/v1/render", { ...invoice, options: { output_ttl_seconds: 300 } });
    assert.equal(answered.status, 200, answered.text);
    const { id: jobId, url, expires_at: expiresAt } = answered.json as { id: string; url: string; expires_at: string };
    h.api.remember(new URL(url).searchParams.get("sig")!);
    assert.ok(Math.abs(Date.parse(expiresAt) - (Date.now() + 300_000)) < 30_000, `expires_at ${expiresAt}: 5 minutes ahead`);
    const outputId = new URL(url).pathname.split("/").pop()!;

    const job = (await h.api.get(`/v1/jobs/${jobId}`, { key: apiKey })).json;
    assert.equal(job.output_id, outputId);
    assert.equal(job.url, url, "signed afresh by storage, to the same expiry");
    assert.equal(job.expires_at, expiresAt);
    const path = `${new URL(url).pathname}${new URL(url).search}`;
    const download = await h.api.get(path);
    assert.equal(download.status, 200);
    assert.ok(Number(/max-age=(\d+)/.exec(download.headers["cache-control"] ?? "")?.[1]) <= 300, "cached no longer than the output lives");

    const free = await h.admin.createKey("free");
    const tooLong = await h.api.post("/v1/render", { ...invoice, options: { output_ttl_seconds: 172_800 } }, { key: free.apiKey });
    assert.equal(tooLong.status, 422, tooLong.text);
    assert.equal(errorShape(tooLong).code, "PAYLOAD_INVALID");
    assert.equal(errorShape(tooLong).error, "options.output_ttl_seconds: 172800 is over the Free plan's maximum of 86400 seconds");
    assert.equal(tooLong.headers["pressroom-job-id"], undefined, "refused before admission");
    const week = await post("/v1/render", { ...invoice, options: { output_ttl_seconds: 604_800 } });
    assert.equal(week.status, 200, "7 days on the pro plan");
    h.api.remember(new URL(week.json.url).searchParams.get("sig")!);

    const removed = await h.api.request("DELETE", `/v1/outputs/${outputId}`, { key: apiKey });
    assert.equal(removed.status, 204, removed.text);
    const gone = await h.api.get(path);
    assert.equal(gone.status, 410, gone.text);
    assert.equal(errorShape(gone).code, "URL_EXPIRED");
    const afterDelete = (await h.api.get(`/v1/jobs/${jobId}`, { key: apiKey })).json;
    assert.deepEqual([afterDelete.output_id, afterDelete.url, afterDelete.expires_at, afterDelete.status], [outputId, null, null, "succeeded"]);
    const listed = (await h.api.get("/v1/jobs?limit=100", { key: apiKey })).json.data.find((entry: { id: string }) => entry.id === jobId);
    assert.equal(listed.url, null, "the list shows no URL for it either");
  });

  it("an output this gateway was announced is 410 once deleted through another replica (its row gone from storage's database)", async () => {
    const answered = await post("/v1/render", invoice);
    assert.equal(answered.status, 200, answered.text);
    const url = new URL(answered.json.url);
    h.api.remember(url.searchParams.get("sig")!);
    const path = `${url.pathname}${url.search}`;
    assert.equal((await h.api.get(path)).status, 200, "served from the gateway's announced copy");
    const db = new pg.Client({ connectionString: h.stack.databaseUrl });
    await db.connect();
    try {
      await db.query("delete from storage.outputs where output_id = $1", [url.pathname.split("/").pop()]);
    } finally {
      await db.end();
    }
    const gone = await h.api.get(path);
    assert.equal(gone.status, 410, gone.text);
    assert.equal(errorShape(gone).code, "URL_EXPIRED");
  });

  it("the Node client deletes an output by its URL", async () => {
    const client = new Pressroom({ apiKey, baseUrl: h.stack.baseUrl });
    const result = await client.render(invoice);
    assert.ok(result.status === "succeeded");
    h.api.remember(new URL(result.url).searchParams.get("sig")!);
    await client.deleteOutput(result.url);
    await assert.rejects(client.download(result.url), (err: { code?: string; status?: number }) => err.code === "URL_EXPIRED" && err.status === 410);
    await assert.rejects(client.deleteOutput(result.url), (err: { code?: string }) => err.code === "NOT_FOUND");
  });

  endOfSuiteChecks(() => h);
});

import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { optionsToContract, type RenderOptions } from "@pressroom/domain";
import { createDb, migrateToLatest } from "@pressroom/platform";
import { createLogger } from "@pressroom/platform/logger";
import { isolatedDatabase } from "@pressroom/stack";
import type { Kysely } from "kysely";
import { loadBuiltinTemplates } from "../catalog/builtin-loader";
import { TemplateCatalog } from "../catalog/catalog";
import { syncBuiltins } from "../catalog/catalog.repository";
import { TemplateExpander } from "../catalog/expander";
import type { RenderDb } from "../db";
import { RenderFailure, type RenderEngine } from "../engine";
import { migrations } from "../migrations";
import { PostProcessClient } from "../postprocess/client";
import { PostProcessHost } from "../postprocess/host";
import { pdfInfo, pdfText, pngSize, startEngine } from "../test-support/engine";
import { EngineProducer } from "./engine-producer";
import type { DocumentJob, ProducedDocument } from "./producer";
import { createSubresourceFetcher } from "./subresources";

/**
 * The producer makes a job's document from the request as admitted: its source (raw HTML,
 * a template of the catalog, a url, documents merged), the request's options, the
 * post-processing they ask for. Real Chromium, PostgreSQL (the catalog), a local web server
 * (the url source) and the PDF tools, in a post-processing process of their own.
 */
describe("engine producer: a job's document", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<RenderDb>;
  let engine: RenderEngine;
  let expander: TemplateExpander;
  let producer: EngineProducer;
  let host: PostProcessHost;
  let postprocessor: PostProcessClient;
  let server: http.Server;
  let origin: string;
  const documents: ProducedDocument[] = [];

  before(async () => {
    database = await isolatedDatabase("pressroom_render_test");
    db = createDb<RenderDb>({ url: database.url, schema: "render" });
    await migrateToLatest(db, "render", migrations);
    await syncBuiltins(db, loadBuiltinTemplates());
    server = http.createServer((_, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end("<!doctype html><title>remote</title><p>a page from the web</p>");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    origin = `http://127.0.0.1:${port}`;
    engine = await startEngine({ slots: 1, fetchSubresource: createSubresourceFetcher({ allowLoopback: true, ports: [port] }) });
    expander = new TemplateExpander({ threads: 1, maxOutputBytes: 1024 * 1024 });
    host = new PostProcessHost(createLogger("render-test", "warn"));
    postprocessor = new PostProcessClient(() => host.url());
    producer = new EngineProducer({
      engine,
      templates: new TemplateCatalog(db),
      expander,
      postprocessor,
      deadlineMs: 60_000,
      maxOutputBytes: 10 * 1024 * 1024,
    });
  });

  after(async () => {
    for (const document of documents) document.release();
    await engine?.close();
    await expander?.close();
    await host?.close();
    await new Promise((resolve) => server?.close(resolve));
    await db?.destroy();
    await database?.drop();
  });

  let n = 0;
  const job = (request: Partial<jobEventsV1.JobAccepted>, options: RenderOptions = {}): DocumentJob => ({
    jobId: `job_${++n}`,
    keyId: "key_test",
    request: jobEventsV1.JobAccepted.fromPartial({
      kind: jobEventsV1.JobKind.JOB_KIND_RENDER,
      dataJson: "{}",
      ...request,
      options: optionsToContract(options),
    }),
  });
  const produce = async (of: DocumentJob, signal = new AbortController().signal) => {
    const document = await producer.produce(of, signal);
    documents.push(document);
    return document;
  };

  it("makes raw HTML with the request's data, its header filled with the same data, named after the job", async () => {
    const of = job({ html: "<p>Hello {{who}}</p>", dataJson: '{"who":"Ada"}' }, { headerHtml: '<div style="font-size:10px">For {{who}}</div>', format: "A5" });
    const document = await produce(of);
    assert.deepEqual([document.contentType, document.format, document.pages, document.attachment], ["application/pdf", "pdf", 1, false]);
    assert.equal(document.filename, `document-${of.jobId}.pdf`);
    const text = pdfText(document.data);
    assert.match(text, /Hello Ada/);
    assert.match(text, /For Ada/);
    assert.ok(Math.abs(pdfInfo(document.data).widthPt - 419.5) < 2, "the request's paper");
  });

  it("makes a template of the catalog, exactly the version admitted, on its own paper, with the request's options over it", async () => {
    const receipt = loadBuiltinTemplates().find((t) => t.id === "receipt")!;
    const of = job({ templateId: "receipt", templateVersion: 1, templateGeneration: 1, dataJson: JSON.stringify(receipt.sampleData) }, { filename: "Beleg" });
    const document = await produce(of);
    assert.equal(document.filename, "Beleg.pdf");
    assert.equal(document.attachment, true);
    const info = pdfInfo(document.data);
    assert.ok(Math.abs(info.widthPt - 419.5) < 2 && Math.abs(info.heightPt - 595.3) < 2, `the template's A5: ${info.widthPt} x ${info.heightPt}`);
    const landscape = await produce(
      job({ templateId: "receipt", templateVersion: 1, templateGeneration: 1, dataJson: JSON.stringify(receipt.sampleData) }, { landscape: true }),
    );
    assert.ok(pdfInfo(landscape.data).widthPt > pdfInfo(landscape.data).heightPt, "the request's landscape over the template's page");
  });

  it("makes a url's page fetched through the guard, and an image of the viewport in the asked format", async () => {
    const page = await produce(job({ url: `${origin}/` }));
    assert.match(pdfText(page.data), /a page from the web/);
    const image = await produce(job({ kind: jobEventsV1.JobKind.JOB_KIND_IMAGE, url: `${origin}/` }, { imageFormat: "jpeg", filename: "shot.jpg" }));
    assert.deepEqual([image.contentType, image.format, image.filename], ["image/jpeg", "jpeg", "shot.jpg"]);
    const png = await produce(job({ kind: jobEventsV1.JobKind.JOB_KIND_IMAGE, html: "<p>card</p>" }, { imageWidth: 300, imageHeight: 100 }));
    assert.deepEqual(pngSize(png.data), { width: 300, height: 100 });
  });

  it("merges documents in order, and fails the job with the part that failed, naming it", async () => {
    const part = (html: string) => jobEventsV1.DocumentPart.fromPartial({ html, dataJson: "{}" });
    const merged = await produce(job({ documents: [part("<p>first part</p>"), part('<p style="break-after:page">second</p><p>part</p>')] }));
    assert.equal(merged.pages, 3);
    assert.match(pdfText(merged.data), /first part[\s\S]*second[\s\S]*part/);
    await assert.rejects(produce(job({ documents: [part("<p>fine</p>"), part("<script>throw new Error('broken part')</script>")] })), (err: unknown) => {
      assert.ok(err instanceof RenderFailure && err.reason === "script_error");
      assert.match(err.message, /^documents\[1\]: .*broken part/);
      return true;
    });
  });

  it("post-processes what the options ask for, and holds the output cap after it", async () => {
    const stamped = await produce(job({ html: "<p>body</p>" }, { watermark: { text: "CONFIDENTIAL", angle: 0 }, metadata: { title: "Stamped" } }));
    assert.match(pdfText(stamped.data), /CONFIDENTIAL/);
    const printed = await produce(job({ html: "<p>body</p>" }));
    assert.ok(stamped.data.byteLength > printed.data.byteLength + 1_000, "the watermark's font makes it larger");
    // Room for the print, not for the watermark's font.
    const capped = new EngineProducer({
      engine,
      templates: new TemplateCatalog(db),
      expander,
      postprocessor,
      deadlineMs: 60_000,
      maxOutputBytes: printed.data.byteLength + 1_000,
    });
    const fits = await capped.produce(job({ html: "<p>body</p>" }), new AbortController().signal);
    documents.push(fits);
    assert.ok(fits.data.byteLength > 0);
    await assert.rejects(capped.produce(job({ html: "<p>body</p>" }, { watermark: { text: "DRAFT" } }), new AbortController().signal), (err: unknown) => {
      assert.ok(err instanceof RenderFailure && err.reason === "output_cap", String(err));
      return true;
    });
  });

  it("stops when told to, with the signal's reason, and renders again afterwards", async () => {
    const cancelled = new AbortController();
    const making = produce(job({ html: "<script>while (true) {}</script>" }), cancelled.signal);
    setTimeout(() => cancelled.abort(new Error("another delivery took the job")), 300);
    await assert.rejects(making, /another delivery took the job/);
    assert.match(pdfText((await produce(job({ html: "<p>next</p>" }))).data), /next/);
  });
});

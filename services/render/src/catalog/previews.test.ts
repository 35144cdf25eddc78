import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { sendUnaryData, ServerUnaryCall } from "@grpc/grpc-js";
import { renderV1 } from "@pressroom/contracts";
import { createDb, createLogger, fromGrpcError, migrateToLatest } from "@pressroom/platform";
import { isolatedDatabase, provisionNats, startPrivateNats, type PrivateNats } from "@pressroom/stack";
import type { Kysely } from "kysely";
import { connect, type NatsConnection } from "nats";
import type { RenderDb } from "../db";
import type { RenderEngine, RenderJob } from "../engine";
import { migrations } from "../migrations";
import { pngPixel } from "../postprocess";
import { PostProcessClient } from "../postprocess/client";
import { PostProcessHost } from "../postprocess/host";
import { startEngine } from "../test-support/engine";
import { loadBuiltinTemplates } from "./builtin-loader";
import { TemplateCatalog } from "./catalog";
import { syncBuiltins } from "./catalog.repository";
import { catalogService } from "./catalog.grpc";
import { TemplateExpander } from "./expander";
import { PreviewQueue } from "./preview-queue";

/**
 * Previews run customers' HTML, so they are renders (issue 39): in the owner's windows, within
 * their own deadline, stopped when their caller goes, through a bounded queue per process, and
 * stored once rendered so that no replica renders a version's preview again. Real PostgreSQL,
 * NATS JetStream and Chromium; the engine's calls are recorded on their way through.
 */

/** A unary call as grpc-js hands it to a handler: `cancel()` is the caller going away. */
function invoke<Req, Res>(handler: (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void, request: Req): Promise<Res> & { cancel(): void } {
  const call = Object.assign(new EventEmitter(), { request, cancelled: false, getDeadline: () => Infinity });
  const answer = new Promise<Res>((resolve, reject) =>
    handler(call as unknown as ServerUnaryCall<Req, Res>, (err, res) => (err ? reject(fromGrpcError(err)) : resolve(res!))),
  );
  return Object.assign(answer, {
    cancel: () => {
      call.cancelled = true;
      call.emit("cancelled", "cancelled");
    },
  });
}

const PAGE = {
  format: "A4",
  landscape: false,
  marginTop: "1cm",
  marginRight: "1cm",
  marginBottom: "1cm",
  marginLeft: "1cm",
  headerTemplate: "",
  footerTemplate: "",
};

function saving(id: string, html: string, owner = "key-a"): renderV1.SaveTemplateRequest {
  const template = renderV1.Template.fromPartial({ id, name: id, output: renderV1.OutputFormat.OUTPUT_FORMAT_PDF, page: PAGE, dataSchemaJson: "{}" });
  return renderV1.SaveTemplateRequest.fromPartial({ owner, template: { ...template, sampleDataJson: '{"who":"Ada"}' }, html, maxTemplates: 50, plan: "pro" });
}

describe("catalog previews: renders of their own", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<RenderDb>;
  let engine: RenderEngine;
  let expander: TemplateExpander;
  let host: PostProcessHost;
  let nats: PrivateNats;
  let nc: NatsConnection;
  let dir: string;
  /** A catalog service as another replica would have it: nothing in memory. */
  let replica: (queue?: PreviewQueue) => renderV1.TemplateCatalogServiceServer;
  const keys: (string | undefined)[] = [];
  const PREVIEW_DEADLINE_MS = 4_000;

  before(async () => {
    database = await isolatedDatabase("pressroom_render_test");
    db = createDb<RenderDb>({ url: database.url, schema: "render" });
    await migrateToLatest(db, "render", migrations);
    await syncBuiltins(db, loadBuiltinTemplates());
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-previews-"));
    nats = await startPrivateNats(path.join(dir, "nats"));
    await provisionNats(nats.url);
    nc = await connect({ servers: nats.url });
    engine = await startEngine({ slots: 2, deadlineMs: 30_000 });
    const render = engine.render.bind(engine);
    engine.render = (job: RenderJob, options) => {
      keys.push(job.keyId);
      return render(job, options);
    };
    expander = new TemplateExpander({ threads: 1, maxOutputBytes: 1024 * 1024 });
    host = new PostProcessHost(createLogger("render-test", "warn"));
    const postprocessor = new PostProcessClient(() => host.url());
    const logger = createLogger("render-test", "silent");
    replica = (previewQueue = new PreviewQueue({ slots: 2, maxWaiting: 4 })) =>
      catalogService({
        catalog: new TemplateCatalog(db),
        expander,
        engine,
        postprocessor,
        db,
        js: nc.jetstream(),
        previewDeadlineMs: PREVIEW_DEADLINE_MS,
        maxOutputBytes: 10 * 1024 * 1024,
        previewQueue,
        logger,
      });
  });

  after(async () => {
    await engine?.close();
    await expander?.close();
    await host?.close();
    await nc?.close();
    await nats?.stop();
    await db?.destroy();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("renders an own template's preview with its owner's key, once: stored with the version, read by any replica without rendering", async () => {
    keys.length = 0;
    await invoke(replica().saveTemplate, saving("mine", "<p>{{who}}</p>"));
    assert.deepEqual(keys, ["key-a"], "the save rendered its preview in its owner's windows");
    const other = replica();
    const read = await invoke(other.getPreview, renderV1.GetPreviewRequest.fromPartial({ id: "mine", owner: "key-a", render: true }));
    assert.equal(read.rendered, false, "stored: nothing rendered, nothing to count");
    assert.equal(Buffer.from(read.png).subarray(1, 4).toString("latin1"), "PNG");
    assert.deepEqual(keys, ["key-a"]);
  });

  it("previews a pdf template as its first printed page: its margins, its default options' footer filled with the sample data, its paper", async () => {
    const request = saving("framed", '<div style="border-top:100px solid #000">{{who}}</div><div style="break-before:page">two</div>');
    const framed = renderV1.SaveTemplateRequest.fromPartial({
      ...request,
      template: {
        ...request.template,
        page: { ...PAGE, format: "Letter", marginTop: "2in", marginLeft: "2in", marginBottom: "1in" },
        optionsJson: JSON.stringify({ footer_html: '<div style="width:100%;border-top:20px solid #000;font-size:10px">{{who}}</div>' }),
      },
    });
    await invoke(replica().saveTemplate, framed);
    const { png } = await invoke(replica().getPreview, renderV1.GetPreviewRequest.fromPartial({ id: "framed", owner: "key-a", render: true }));
    const dark = async (x: number, y: number) => (await pngPixel(png, x, y)).rgb.every((channel) => channel < 64);
    const { width, height } = await pngPixel(png, 0, 0);
    assert.deepEqual([width, height], [816, 1056], "US Letter at 96 px to the inch");
    assert.equal(await dark(400, 240), true, "the document's band starts 2 in down the page");
    assert.equal(await dark(400, 150), false, "the top margin is blank");
    assert.equal(await dark(96, 240), false, "the left margin is blank");
    const footer = await Promise.all(Array.from({ length: 24 }, (_, i) => dark(400, height - 96 + i * 4)));
    assert.ok(footer.includes(true), "the footer is drawn in the bottom margin");
  });

  it("answers absent for an own template without a stored preview unless the caller admitted a render; renders it then, once", async () => {
    await invoke(replica().saveTemplate, saving("unstored", "<p>{{who}}</p>"));
    await db.deleteFrom("previews").where("id", "=", "unstored").execute();
    keys.length = 0;
    const service = replica();
    const absent = await invoke(service.getPreview, renderV1.GetPreviewRequest.fromPartial({ id: "unstored", owner: "key-a" }));
    assert.deepEqual([absent.absent, absent.png.length, keys.length], [true, 0, 0]);
    const rendered = await invoke(service.getPreview, renderV1.GetPreviewRequest.fromPartial({ id: "unstored", owner: "key-a", render: true }));
    assert.deepEqual([rendered.rendered, rendered.absent, keys], [true, false, ["key-a"]]);
    const again = await invoke(replica().getPreview, renderV1.GetPreviewRequest.fromPartial({ id: "unstored", owner: "key-a", render: true }));
    assert.equal(again.rendered, false);
  });

  it("keeps each version's preview: GetPreview answers the version asked for, the current one without; a delete drops them all", async () => {
    const service = replica();
    await invoke(service.saveTemplate, saving("versions", "<p>one {{who}}</p>"));
    await invoke(service.saveTemplate, { ...saving("versions", "<p>two {{who}}</p>"), replace: true });
    keys.length = 0;
    const preview = (version: number) =>
      invoke(replica().getPreview, renderV1.GetPreviewRequest.fromPartial({ id: "versions", owner: "key-a", version, render: false }));
    const [first, second, current] = await Promise.all([preview(1), preview(2), preview(0)]);
    assert.deepEqual([first.version, second.version, current.version], [1, 2, 2]);
    assert.ok(!first.absent && !second.absent, "both versions' previews are stored");
    assert.notDeepEqual(Buffer.from(first.png), Buffer.from(second.png));
    assert.deepEqual(Buffer.from(current.png), Buffer.from(second.png));
    assert.deepEqual(keys, [], "read, not rendered");
    await assert.rejects(preview(3), { code: "TEMPLATE_VERSION_NOT_FOUND" });
    await invoke(service.deleteTemplate, renderV1.DeleteTemplateRequest.fromPartial({ id: "versions", owner: "key-a" }));
    assert.equal((await db.selectFrom("previews").select("version").where("id", "=", "versions").execute()).length, 0);
  });

  it("renders a draft in its owner's windows and stores nothing; a draft that does not compile is refused naming its line, before any render", async () => {
    keys.length = 0;
    const draft = saving("a-draft", "<p>{{who}}</p>");
    const answer = await invoke(
      replica().previewDraft,
      renderV1.PreviewDraftRequest.fromPartial({ owner: "key-a", template: draft.template, html: draft.html }),
    );
    assert.equal(Buffer.from(answer.png).subarray(1, 4).toString("latin1"), "PNG");
    assert.deepEqual(keys, ["key-a"]);
    assert.equal((await db.selectFrom("previews").select("id").where("id", "=", "a-draft").execute()).length, 0);
    assert.equal((await db.selectFrom("templates").select("id").where("id", "=", "a-draft").execute()).length, 0);
    const broken = renderV1.PreviewDraftRequest.fromPartial({ owner: "key-a", template: draft.template, html: "<p>one</p>\n<p>{{#if who}</p>" });
    await assert.rejects(invoke(replica().previewDraft, broken), { code: "PAYLOAD_INVALID", message: /^html: does not compile at line 2, column \d+/ });
    const checked = await invoke(replica().previewDraft, { ...broken, html: draft.html, checkOnly: true });
    assert.deepEqual([checked.png.length, keys.length], [0, 1], "check_only renders nothing");
  });

  it("renders a public template's preview once, in the shared windows, whoever reads it", async () => {
    await db.deleteFrom("previews").where("owner", "=", "").execute();
    keys.length = 0;
    const reads = [replica(), replica()].flatMap((service) =>
      ["", "key-a", "key-b"].map((owner) => invoke(service.getPreview, renderV1.GetPreviewRequest.fromPartial({ id: "invoice", owner }))),
    );
    const answers = await Promise.all(reads);
    assert.ok(answers.every((answer) => !answer.absent && !answer.rendered && answer.png.length > 0));
    assert.ok(keys.length >= 1 && keys.length <= 2 && keys.every((key) => key === undefined), `one render per replica at most: ${JSON.stringify(keys)}`);
    keys.length = 0;
    await invoke(replica().getPreview, renderV1.GetPreviewRequest.fromPartial({ id: "invoice" }));
    assert.deepEqual(keys, [], "stored");
  });

  it("fails a preview past its own deadline RENDER_FAILED, naming it", async () => {
    await assert.rejects(invoke(replica().saveTemplate, saving("spins", "<script>for (;;) {}</script>")), (err: Error & { code?: string }) => {
      assert.equal(err.code, "RENDER_FAILED");
      assert.match(err.message, /the preview failed: .*4 s deadline/);
      return true;
    });
  });

  it("stops a preview whose caller goes away: its render ends at once and its slot serves the next", async () => {
    const queue = new PreviewQueue({ slots: 1, maxWaiting: 0 });
    const service = replica(queue);
    const spinning = invoke(service.saveTemplate, saving("spins-cancelled", "<script>for (;;) {}</script>"));
    const outcome = spinning.then(
      () => "rendered",
      (err: Error & { code?: string }) => err.code ?? err.message,
    );
    while (engine.stats().busySlots === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    spinning.cancel();
    assert.equal(await outcome, "UNAVAILABLE", "cancelled, not failed by its deadline");
    assert.equal(queue.running, 0);
    assert.equal(engine.stats().busySlots, 0, "the engine's slot is free again");
    const next = await invoke(service.saveTemplate, saving("after-cancel", "<p>next</p>"));
    assert.equal(next.template?.id, "after-cancel");
  });

  it("bounds the previews waiting per process: past the queue, refused at once (UNAVAILABLE, retry)", async () => {
    const queue = new PreviewQueue({ slots: 1, maxWaiting: 1 });
    const service = replica(queue);
    const running = invoke(service.saveTemplate, saving("q-running", "<script>for (;;) {}</script>"));
    while (engine.stats().busySlots === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const waiting = invoke(service.saveTemplate, saving("q-waiting", "<p>waits</p>"));
    while (queue.waiting === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await assert.rejects(invoke(service.saveTemplate, saving("q-refused", "<p>refused</p>")), { code: "UNAVAILABLE", message: /too many previews/ });
    running.cancel();
    await running.catch(() => undefined);
    assert.equal((await waiting).template?.id, "q-waiting", "the waiting one ran once the slot was free");
  });
});

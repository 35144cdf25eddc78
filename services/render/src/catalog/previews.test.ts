import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { sendUnaryData, ServerUnaryCall } from "@grpc/grpc-js";
import { renderV1 } from "@pressroom/contracts";
import { createDb, createLogger, migrateToLatest } from "@pressroom/platform";
import { isolatedDatabase, provisionNats, startPrivateNats, type PrivateNats } from "@pressroom/stack";
import type { Kysely } from "kysely";
import { connect, type NatsConnection } from "nats";
import type { RenderDb } from "../db";
import type { RenderEngine, RenderJob } from "../engine";
import { migrations } from "../migrations";
import { startEngine } from "../test-support/engine";
import { loadBuiltinTemplates } from "./builtin-loader";
import { TemplateCatalog } from "./catalog";
import { syncBuiltins } from "./catalog.repository";
import { catalogService } from "./catalog.grpc";
import { TemplateExpander } from "./expander";

/**
 * Previews of own templates run the customer's HTML: at save and for
 * preview.png they render in the owner's windows (a window serves one API key
 * only), the public catalog's in the shared ones. Real PostgreSQL, NATS
 * JetStream, Chromium; the engine's calls are recorded on their way through.
 */

function invoke<Req, Res>(handler: (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void, request: Req): Promise<Res> {
  return new Promise((resolve, reject) => handler({ request } as ServerUnaryCall<Req, Res>, (err, res) => (err ? reject(err) : resolve(res!))));
}

describe("catalog previews: the owner's windows", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<RenderDb>;
  let engine: RenderEngine;
  let expander: TemplateExpander;
  let nats: PrivateNats;
  let nc: NatsConnection;
  let dir: string;
  /** A catalog service with an empty preview cache. */
  let fresh: () => renderV1.TemplateCatalogServiceServer;
  const keys: (string | undefined)[] = [];

  before(async () => {
    database = await isolatedDatabase("pressroom_render_test");
    db = createDb<RenderDb>({ url: database.url, schema: "render" });
    await migrateToLatest(db, "render", migrations);
    await syncBuiltins(db, loadBuiltinTemplates());
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-previews-"));
    nats = await startPrivateNats(path.join(dir, "nats"));
    await provisionNats(nats.url);
    nc = await connect({ servers: nats.url });
    engine = await startEngine({ slots: 1 });
    const render = engine.render.bind(engine);
    engine.render = (job: RenderJob, options) => {
      keys.push(job.keyId);
      return render(job, options);
    };
    expander = new TemplateExpander({ threads: 1, maxOutputBytes: 1024 * 1024 });
    const logger = createLogger("render-test", "silent");
    fresh = () => catalogService({ catalog: new TemplateCatalog(db), expander, engine, db, js: nc.jetstream(), deadlineMs: 15_000, logger });
  });

  after(async () => {
    await engine?.close();
    await expander?.close();
    await nc?.close();
    await nats?.stop();
    await db?.destroy();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("renders an own template's preview with its owner's key, at save and for preview.png; a public one's with none", async () => {
    const template: renderV1.Template = {
      id: "mine",
      version: 0,
      name: "Mine",
      description: "",
      output: renderV1.OutputFormat.OUTPUT_FORMAT_PDF,
      page: {
        format: "A4",
        landscape: false,
        marginTop: "1cm",
        marginRight: "1cm",
        marginBottom: "1cm",
        marginLeft: "1cm",
        headerTemplate: "",
        footerTemplate: "",
      },
      image: undefined,
      dataSchemaJson: "{}",
      sampleDataJson: JSON.stringify({ who: "Ada" }),
      owner: "",
      createdAt: "",
      generation: 0,
      html: "",
      assetNames: [],
    };
    const saving = fresh();
    keys.length = 0;
    await invoke(saving.saveTemplate, { owner: "key-a", replace: false, template, html: "<p>{{who}}</p>", assets: {}, maxTemplates: 5, plan: "pro" });
    assert.deepEqual(keys, ["key-a"]);
    keys.length = 0;
    const reading = fresh();
    await invoke(reading.getPreview, { id: "mine", owner: "key-a" });
    await invoke(reading.getPreview, { id: "invoice", owner: "key-a" });
    assert.deepEqual(keys, ["key-a", undefined]);
  });
});

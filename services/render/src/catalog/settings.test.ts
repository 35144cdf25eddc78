import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createDb, migrateToLatest } from "@pressroom/platform";
import { isolatedDatabase } from "@pressroom/stack";
import type { Kysely } from "kysely";
import type { RenderDb } from "../db";
import { RenderFailure, type RenderEngine } from "../engine";
import { startEngine } from "../test-support/engine";
import { migrations } from "../migrations";
import { BUILTIN_DIR, loadBuiltinTemplates } from "./builtin-loader";
import { TemplateCatalog } from "./catalog";
import { engineJob } from "./engine-job";
import { syncBuiltins, type TemplateRow } from "./catalog.repository";
import { compileTemplate } from "./handlebars";

/**
 * Script errors fail a render unless the template's manifest opts out
 * (`"settings": {"script_errors": "ignore"}`); none of the built-in
 * templates needs to. Real PostgreSQL and Chromium.
 */
describe("template settings: script errors", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<RenderDb>;
  let engine: RenderEngine;
  let dir: string;

  const render = async (catalog: TemplateCatalog, row: TemplateRow) => {
    const template = await catalog.get(row.id, row.version);
    return engine.render(engineJob(template, { html: compileTemplate(template.body)(row.sample_data), kind: row.output, options: {}, keyId: "" }));
  };

  before(async () => {
    database = await isolatedDatabase("pressroom_render_test");
    db = createDb<RenderDb>({ url: database.url, schema: "render" });
    await migrateToLatest(db, "render", migrations);
    engine = await startEngine({ slots: 2 });
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-templates-"));
    cpSync(BUILTIN_DIR, dir, { recursive: true });
    const throwing = (id: string, settings?: object) => {
      mkdirSync(path.join(dir, id));
      const manifest = {
        id,
        name: id,
        description: "throws",
        output: "pdf",
        ...(settings ? { settings } : {}),
        data_schema: { type: "object" },
        sample_data: { who: "Ada" },
      };
      writeFileSync(path.join(dir, id, "manifest.json"), JSON.stringify(manifest));
      writeFileSync(path.join(dir, id, "template.hbs"), `<p>Hello {{who}}</p><script>window.analytics.track("view")</script>`);
    };
    throwing("tolerant", { script_errors: "ignore" });
    throwing("strict");
    await syncBuiltins(db, loadBuiltinTemplates(dir));
  });

  after(async () => {
    await engine?.close();
    await db?.destroy();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("renders every built-in template's sample without a script error", async () => {
    const catalog = new TemplateCatalog(db);
    const builtins = new Set(loadBuiltinTemplates().map((t) => t.id));
    assert.equal(builtins.size, 10);
    const rows = (await catalog.list()).filter((row) => builtins.has(row.id));
    assert.equal(rows.length, 10);
    for (const row of rows) {
      assert.equal(row.settings.script_errors, undefined, `${row.id} does not opt out`);
      const out = await render(catalog, row);
      assert.ok(out.data.byteLength > 0, row.id);
    }
  });

  it("fails a template whose script throws, unless its manifest settings opt out", async () => {
    const catalog = new TemplateCatalog(db);
    const strict = await catalog.find("strict");
    await assert.rejects(render(catalog, strict), (err: unknown) => {
      assert.ok(err instanceof RenderFailure && err.reason === "script_error", String(err));
      assert.match(err.message, /TypeError: Cannot read properties of undefined \(reading 'track'\)/);
      return true;
    });
    const tolerant = await catalog.find("tolerant");
    assert.deepEqual(tolerant.settings, { script_errors: "ignore" });
    assert.equal((await render(catalog, tolerant)).contentType, "application/pdf");
  });
});

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createDb, migrateToLatest } from "@pressroom/platform";
import { isolatedDatabase } from "@pressroom/stack";
import type { Kysely } from "kysely";
import type { RenderDb } from "../db";
import { migrations } from "../migrations";
import { loadBuiltinTemplates } from "./builtin-loader";
import { TemplateCatalog } from "./catalog";
import { syncBuiltins } from "./catalog.repository";
import { TemplateExpander } from "./expander";

describe("TemplateCatalog.warm", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<RenderDb>;

  before(async () => {
    database = await isolatedDatabase("pressroom_render_test");
    db = createDb<RenderDb>({ url: database.url, schema: "render" });
    await migrateToLatest(db, "render", migrations);
    await syncBuiltins(db, loadBuiltinTemplates());
  });

  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it("loads every template before the first job, which then needs no database", async () => {
    const catalog = new TemplateCatalog(db);
    const expander = new TemplateExpander({ threads: 2, maxOutputBytes: 1024 * 1024 });
    after(() => expander.close());
    const builtins = loadBuiltinTemplates();
    assert.equal(await catalog.warm(), builtins.length);
    const rows = await catalog.list();
    // Cut the database off: only what warm() cached can answer now.
    await db.destroy();
    for (const row of rows) {
      const template = await catalog.get(row.id, row.version, row.owner, row.generation);
      const html = await expander.expand({
        source: template.body,
        cacheKey: `${row.id}@${row.version}`,
        dataJson: JSON.stringify(row.sample_data),
        timeoutMs: 30_000,
      });
      assert.match(html, /<\/?[a-z]/i, `${row.id} renders its sample`);
    }
    await assert.rejects(catalog.get("not-warmed", 1));
  });
});

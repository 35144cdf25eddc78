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

  it("compiles every template before the first job, which then needs no database", async () => {
    const catalog = new TemplateCatalog(db);
    const builtins = loadBuiltinTemplates();
    assert.equal(await catalog.warm(), builtins.length);
    const rows = await catalog.list();
    // Cut the database off: only what warm() cached can answer now.
    await db.destroy();
    for (const row of rows) {
      const template = await catalog.get(row.id, row.version);
      assert.match(template.render(row.sample_data), /<\/?[a-z]/i, `${row.id} renders its sample`);
    }
    await assert.rejects(catalog.get("not-warmed", 1));
  });
});

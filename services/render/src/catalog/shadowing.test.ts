import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createDb, migrateToLatest } from "@pressroom/platform";
import { isolatedDatabase } from "@pressroom/stack";
import type { Kysely } from "kysely";
import type { RenderDb } from "../db";
import { migrations } from "../migrations";
import { loadBuiltinTemplates, type BuiltinTemplate } from "./builtin-loader";
import { TemplateCatalog } from "./catalog";
import { syncBuiltins } from "./catalog.repository";
import { checkSave, listVersions, saveVersion } from "./own-templates.repository";

/**
 * A create that names a public id is refused, but a built-in added by a later release may take
 * an id an account already uses for its own template (issue 39): for that account the id keeps
 * naming its own template (find, list, versions); for every other account, the public one.
 */
describe("a built-in added later never shadows an account's own template of the same id", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<RenderDb>;
  let catalog: TemplateCatalog;
  const own = (body: string) => ({
    row: {
      name: "Mine",
      description: "",
      output: "pdf" as const,
      page: null,
      image: null,
      settings: "{}",
      data_schema: "{}",
      sample_data: "{}",
      body,
      content_hash: body,
    },
    assets: new Map<string, Buffer>(),
  });

  before(async () => {
    database = await isolatedDatabase("pressroom_render_test");
    db = createDb<RenderDb>({ url: database.url, schema: "render" });
    await migrateToLatest(db, "render", migrations);
    const builtins = loadBuiltinTemplates();
    await syncBuiltins(db, builtins);
    const rules = { owner: "key-a", id: "ledger", replace: false, output: "pdf" as const, maxTemplates: 10, plan: "pro" };
    await saveVersion(db, rules, own("<p>mine, v1</p>"));
    await saveVersion(db, { ...rules, replace: true }, own("<p>mine, v2</p>"));
    // A later release ships a built-in of that id.
    const ledger: BuiltinTemplate = { ...builtins.find((t) => t.id === "invoice")!, id: "ledger", name: "Ledger", contentHash: "ledger-builtin" };
    await syncBuiltins(db, [...builtins, ledger]);
    catalog = new TemplateCatalog(db);
  });

  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it("finds the owner's own template, current or pinned; everyone else, the public one", async () => {
    assert.deepEqual(await catalog.find("ledger", "key-a").then((t) => [t.owner, t.version, t.body]), ["key-a", 2, "<p>mine, v2</p>"]);
    assert.deepEqual(await catalog.find("ledger", "key-a", 1).then((t) => [t.owner, t.body]), ["key-a", "<p>mine, v1</p>"]);
    await assert.rejects(catalog.find("ledger", "key-a", 3), { code: "TEMPLATE_VERSION_NOT_FOUND" });
    assert.equal((await catalog.find("ledger", "key-b")).owner, "");
    assert.equal((await catalog.find("ledger")).owner, "");
    assert.equal(await catalog.shadowed("ledger"), true);
    assert.equal(await catalog.shadowed("invoice"), false);
  });

  it("lists the owner's own template in place of the public one, and its own versions", async () => {
    const mine = (await catalog.list("key-a")).filter((t) => t.id === "ledger");
    assert.deepEqual(
      mine.map((t) => t.owner),
      ["key-a"],
    );
    assert.deepEqual(
      (await catalog.list("key-b")).filter((t) => t.id === "ledger").map((t) => t.owner),
      [""],
    );
    assert.deepEqual(
      (await listVersions(db, "key-a", "ledger")).map((v) => v.version),
      [2, 1],
    );
  });

  it("still refuses another account a create of the public id", async () => {
    await assert.rejects(checkSave(db, { owner: "key-b", id: "ledger", replace: false, output: "pdf", maxTemplates: 10, plan: "pro" }), {
      code: "TEMPLATE_EXISTS",
    });
  });
});

import { runMigrateEntrypoint } from "@pressroom/platform";
import { loadBuiltinTemplates } from "./catalog/builtin-loader";
import { syncBuiltins } from "./catalog/catalog.repository";
import type { RenderDb } from "./db";
import { migrations } from "./migrations";

void runMigrateEntrypoint<RenderDb>("render", migrations, async (db, logger) => {
  const added = await syncBuiltins(db, loadBuiltinTemplates());
  if (added.length) logger.info({ added }, "built-in templates added to the catalog");
});

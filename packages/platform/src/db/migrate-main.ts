import type { Migration } from "kysely";
import { loadConfig } from "../config";
import { z } from "zod";
import { createLogger } from "../logger";
import { createDb, migrateToLatest } from "./db";

/** The body of every service's `migrate` entrypoint. */
export async function runMigrateEntrypoint(schema: string, migrations: Record<string, Migration>): Promise<void> {
  const config = loadConfig(z.object({ DATABASE_URL: z.string().min(1), LOG_LEVEL: z.string().default("info") }));
  const logger = createLogger(`${schema}-migrate`, config.LOG_LEVEL);
  const db = createDb({ url: config.DATABASE_URL, schema, max: 1, logger });
  try {
    const applied = await migrateToLatest(db, schema, migrations);
    logger.info({ schema, applied }, applied.length ? "migrations applied" : "schema up to date");
  } catch (err) {
    logger.error({ err, schema }, "migration failed");
    process.exitCode = 1;
  } finally {
    await db.destroy();
  }
}

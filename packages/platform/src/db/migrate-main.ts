import type { Kysely, Migration } from "kysely";
import { env, loadConfig } from "../config";
import { z } from "zod";
import { createLogger, type Logger } from "../logger";
import { createDb, migrateToLatest, waitForDatabase } from "./db";
import { provisionServiceRole } from "./roles";

/**
 * What a schema's one-off step writes after its migrations: data the service
 * needs but never writes when it starts (the demo key, the built-in
 * templates). Idempotent: the step runs at every install and upgrade.
 */
export type Seed<DB> = (db: Kysely<DB>, logger: Logger) => Promise<void>;

/**
 * The body of every service's `migrate` entrypoint: the one-off step the
 * chart's provision Job and the local stack run before the services start.
 * DATABASE_URL is the service's own credential; with DATABASE_ADMIN_URL, the
 * step first makes that role and its schema as the admin (provisionServiceRole).
 * The migrations and the seed run as the service's role.
 */
export async function runMigrateEntrypoint<DB>(schema: string, migrations: Record<string, Migration>, seed?: Seed<DB>): Promise<void> {
  const config = loadConfig(
    z.object({
      DATABASE_URL: z.string().min(1),
      DATABASE_ADMIN_URL: z.string().min(1).optional(),
      LOG_LEVEL: z.string().default("info"),
      /** How long to wait for PostgreSQL to answer before failing (the chart's Job starts beside the bundled server). */
      DATABASE_WAIT_MS: env.int(60_000, 0),
    }),
  );
  const logger = createLogger(`${schema}-migrate`, config.LOG_LEVEL);
  const db = createDb<DB>({ url: config.DATABASE_URL, schema, max: 1, logger });
  try {
    // The admin's URL where given: the service's role may not exist yet.
    await waitForDatabase(config.DATABASE_ADMIN_URL ?? config.DATABASE_URL, config.DATABASE_WAIT_MS, logger);
    if (config.DATABASE_ADMIN_URL) {
      const { created } = await provisionServiceRole(config.DATABASE_ADMIN_URL, schema, config.DATABASE_URL);
      logger.info({ schema }, created ? "the service's database role was created" : "the service's database role is up to date");
    }
    const applied = await migrateToLatest(db, schema, migrations);
    logger.info({ schema, applied }, applied.length ? "migrations applied" : "schema up to date");
    await seed?.(db, logger);
  } catch (err) {
    logger.error({ err, schema }, "migration failed");
    process.exitCode = 1;
  } finally {
    await db.destroy();
  }
}

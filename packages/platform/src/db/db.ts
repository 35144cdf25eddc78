import { Kysely, Migrator, PostgresDialect, sql, type Migration } from "kysely";
import pg from "pg";
import type { Logger } from "../logger";

/**
 * A Kysely instance whose connections use the service's own schema.
 *
 * An idle pooled connection that the server ends (a restart, a failover, a
 * terminated backend) is dropped by the pool and replaced on next use; its
 * error is logged, never thrown: unhandled, it would end the process. So is
 * the loss of a connection checked out between two queries (a transaction
 * awaiting something else): its next query fails, and the pool drops it.
 */
export function createDb<DB>(options: { url: string; schema: string; max?: number; logger?: Logger }): Kysely<DB> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    options: `-c search_path=${quoteIdent(options.schema)}`,
    application_name: options.schema,
  });
  pool.on("error", (err) => options.logger?.warn({ err }, "idle database connection lost"));
  pool.on("connect", (client) => client.on("error", (err) => options.logger?.warn({ err }, "database connection in use lost")));
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid schema name "${name}"`);
  return name;
}

/**
 * Applies a service's migrations (named by timestamp, frozen in time) inside
 * its own schema, recording them in that schema. Run by each service's
 * migrate entrypoint, never at service start.
 */
export async function migrateToLatest<DB>(db: Kysely<DB>, schema: string, migrations: Record<string, Migration>): Promise<string[]> {
  // Made by the admin step where the service runs as its own role, which may not create schemas: only made here when missing.
  const { rows } = await sql<{ found: boolean }>`select exists (select 1 from pg_namespace where nspname = ${schema}) as found`.execute(db);
  if (!rows[0]?.found) await sql`create schema if not exists ${sql.id(quoteIdent(schema))}`.execute(db);
  const migrator = new Migrator({
    db,
    migrationTableSchema: schema,
    provider: { getMigrations: async () => migrations },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/** Errors of a server that is not there yet (not listening, not resolvable, starting up), as opposed to one that answers no. */
const NOT_YET = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "57P03"]);

function notYet(err: unknown): boolean {
  const { code, message } = err as { code?: string; message?: string };
  return (code !== undefined && NOT_YET.has(code)) || /Connection terminated unexpectedly/.test(message ?? "");
}

/**
 * Waits until PostgreSQL at `url` answers, for at most `timeoutMs`: a one-off step started
 * beside the database (the chart's provision Job at install) waits for it instead of failing.
 * An answer that is a refusal (a wrong password, a missing database) fails at once.
 */
export async function waitForDatabase(url: string, timeoutMs: number, logger: Logger): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (!notYet(err) || Date.now() >= deadline) throw err;
      if (attempt === 0) logger.info({ host: new URL(url).host, waitMs: timeoutMs }, "waiting for PostgreSQL to answer");
      await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 250 * 2 ** attempt)));
    }
  }
}

/** Checks the database answers; used by readiness probes. */
export async function pingDb<DB>(db: Kysely<DB>): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { freePort, waitFor } from "./ports";

export const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/postgres";

export async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function postgresBin(name: string): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const candidate = path.join(root, version, "bin", name);
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`PostgreSQL's ${name} was not found. Install it with: apt-get install -y postgresql (or set DATABASE_URL to a running server).`);
}

const isRoot = () => process.getuid?.() === 0;

/** Runs a PostgreSQL tool as the postgres user when we are root (PostgreSQL refuses to run as root). */
function runAsPostgres(command: string, args: string[]): void {
  const [file, argv] = isRoot() ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
  const result = spawnSync(file, argv, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed:\n${result.stdout}${result.stderr}`);
}

export interface PrivatePostgres {
  url: string;
  stop(): void;
  /** Stops the server abruptly (immediate mode: no checkpoint, as after a crash) and starts it again on the same port. */
  restart(): Promise<void>;
}

/** Starts a private PostgreSQL under dataDir (initialised on first use) on a free port. */
export async function startPrivatePostgres(dataDir: string): Promise<PrivatePostgres> {
  const pgData = path.join(dataDir, "pgdata");
  mkdirSync(dataDir, { recursive: true });
  if (isRoot()) execFileSync("chown", ["postgres:postgres", dataDir]);
  if (!existsSync(path.join(pgData, "PG_VERSION"))) {
    runAsPostgres(postgresBin("initdb"), ["-D", pgData, "--auth=trust", "-U", "postgres", "--encoding=UTF8", "--no-instructions"]);
  }
  const pgCtl = postgresBin("pg_ctl");
  stopPrivatePostgres(dataDir);
  const port = await freePort();
  const start = async () => {
    runAsPostgres(pgCtl, ["-D", pgData, "-l", path.join(dataDir, "postgres.log"), "-w", "-o", `-p ${port} -k /tmp -c listen_addresses=127.0.0.1`, "start"]);
    await waitFor("private PostgreSQL", () => postgresAnswers(url), 20_000);
  };
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await start();
  return {
    url,
    stop: () => stopPrivatePostgres(dataDir),
    async restart() {
      runAsPostgres(pgCtl, ["-D", pgData, "stop", "-m", "immediate", "-w"]);
      await start();
    },
  };
}

/** Stops a private PostgreSQL started under dataDir, if it runs. */
export function stopPrivatePostgres(dataDir: string): void {
  const pgData = path.join(dataDir, "pgdata");
  if (!existsSync(path.join(pgData, "postmaster.pid"))) return;
  try {
    runAsPostgres(postgresBin("pg_ctl"), ["-D", pgData, "stop", "-m", "fast", "-w"]);
  } catch {
    // Already stopped.
  }
}

/** Replaces the database name of a PostgreSQL URL. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** The services that keep a schema in PostgreSQL: each connects as a role of its own. */
export const DATABASE_SERVICES = ["identity", "storage", "metering", "render", "webhook"] as const;
export type DatabaseService = (typeof DATABASE_SERVICES)[number];

/** A database's credentials: the admin's, for the one-off migrate step only, and each service's own. */
export interface DatabaseCredentials {
  adminUrl: string;
  urls: Record<DatabaseService, string>;
}

/** A service's role on a database: roles belong to the whole server, so each database names its own (`pressroom_identity`). */
export function serviceRoleName(database: string, service: DatabaseService): string {
  const role = `${database}_${service}`;
  if (role.length > 63) throw new Error(`database name ${database} is too long to name its services' roles after it`);
  return role;
}

/** The credentials of the database adminUrl names, each service's role logging in with the password it is given. */
export function databaseCredentials(adminUrl: string, password: (service: DatabaseService) => string): DatabaseCredentials {
  const database = decodeURIComponent(new URL(adminUrl).pathname.slice(1));
  const login = (service: DatabaseService) => {
    const parsed = new URL(adminUrl);
    parsed.username = serviceRoleName(database, service);
    parsed.password = password(service);
    return parsed.toString();
  };
  return { adminUrl, urls: Object.fromEntries(DATABASE_SERVICES.map((service) => [service, login(service)])) as Record<DatabaseService, string> };
}

export async function createDatabase(serverUrl: string, database: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`invalid database name ${database}`);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const exists = await client.query("select 1 from pg_database where datname = $1", [database]);
    if (exists.rowCount === 0) await client.query(`create database ${database}`);
  } finally {
    await client.end();
  }
  return withDatabase(serverUrl, database);
}

/** Drops a database and its services' roles. */
export async function dropDatabase(serverUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists ${database} with (force)`);
    for (const service of DATABASE_SERVICES) await client.query(`drop role if exists ${serviceRoleName(database, service)}`);
  } finally {
    await client.end();
  }
}

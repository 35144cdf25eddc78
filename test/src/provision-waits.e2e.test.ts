import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { streams } from "@pressroom/platform";
import { databaseCredentials, isolatedDatabase, REPO_ROOT, startPrivateNats, type PrivateNats } from "@pressroom/stack";
import { connect } from "nats";
import pg from "pg";
import { tcpGate, type TcpGate } from "./test-support/tcp-gate";

/**
 * The provision Job's steps wait for PostgreSQL and NATS instead of failing (issue 45): at
 * install the Job starts beside the bundled servers, which take a while to answer. Each step
 * runs here as the Job runs it, pointed at a port that resets its connections until the step
 * has retried, then passes them to the real server.
 */

/** Runs a step's entrypoint; resolves with its exit code and output. */
function step(entry: string, env: NodeJS.ProcessEnv): { exit: Promise<{ code: number | null; output: string }> } {
  const child = spawn(process.execPath, [entry], { env: { PATH: process.env.PATH, LOG_LEVEL: "info", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  return { exit: new Promise((resolve) => child.once("exit", (code) => resolve({ code, output }))) };
}

const through = (url: string, gate: TcpGate): string => {
  const parsed = new URL(url);
  parsed.host = `127.0.0.1:${gate.port}`;
  return parsed.toString();
};

describe("the provision steps wait for PostgreSQL and NATS to answer (issue 45)", () => {
  let database: { url: string; drop(): Promise<void> };
  let dir: string;
  let nats: PrivateNats;
  const gates: TcpGate[] = [];
  const gate = async () => {
    const made = await tcpGate();
    gates.push(made);
    return made;
  };
  before(async () => {
    database = await isolatedDatabase("pressroom_waits");
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-waits-"));
    nats = await startPrivateNats(path.join(dir, "nats"));
  });
  after(async () => {
    await Promise.all(gates.map((g) => g.close()));
    await nats?.stop();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const migrate = path.join(REPO_ROOT, "services", "storage", "dist", "migrate.js");
  const storageEnv = (postgres: TcpGate, waitMs: number): NodeJS.ProcessEnv => {
    const credentials = databaseCredentials(database.url, () => "pw-waits-7c1e");
    return {
      DATABASE_ADMIN_URL: through(credentials.adminUrl, postgres),
      DATABASE_URL: through(credentials.urls.storage, postgres),
      DATABASE_WAIT_MS: String(waitMs),
    };
  };

  it("a migration step started before PostgreSQL answers waits, then makes its role and schema", async () => {
    const postgres = await gate();
    const run = step(migrate, storageEnv(postgres, 60_000));
    await postgres.attempts(2);
    postgres.open(Number(new URL(database.url).port || 5432));
    const { code, output } = await run.exit;
    assert.equal(code, 0, output);
    assert.match(output, /waiting for PostgreSQL to answer/);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ owner: string }>("select nspowner::regrole::text as owner from pg_namespace where nspname = 'storage'");
      assert.equal(rows[0]?.owner, `${new URL(database.url).pathname.slice(1)}_storage`);
    } finally {
      await client.end();
    }
  });

  it("without a wait it fails, as every step did before (the control)", async () => {
    const { code, output } = await step(migrate, storageEnv(await gate(), 0)).exit;
    assert.equal(code, 1, output);
  });

  it("the NATS step started before NATS answers waits, then provisions every stream", async () => {
    const server = await gate();
    const run = step(path.join(REPO_ROOT, "packages", "platform", "dist", "nats", "provision-main.js"), {
      NATS_URL: `nats://127.0.0.1:${server.port}`,
      NATS_CONNECT_ATTEMPTS: "120",
    });
    await server.attempts(2);
    server.open(nats.port);
    const { code, output } = await run.exit;
    assert.equal(code, 0, output);
    const nc = await connect({ servers: nats.url });
    try {
      const names: string[] = [];
      for await (const stream of (await nc.jetstreamManager()).streams.list()) names.push(stream.config.name);
      assert.deepEqual(names.filter((name) => Object.values(streams).includes(name as never)).sort(), Object.values(streams).sort());
    } finally {
      await nc.close();
    }
  });
});

import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { createDb, createLogger } from "@pressroom/platform";
import { isolatedDatabase } from "@pressroom/stack";
import { sql, type Kysely } from "kysely";
import pg from "pg";

/**
 * A service's connection pool when PostgreSQL ends its idle connections (a
 * restart, a failover, an operator's pg_terminate_backend): the process keeps
 * running, the loss is logged, and the next query gets a fresh connection.
 */
describe("a service's database pool", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Kysely<unknown>;
  const logLines: string[] = [];

  before(async () => {
    database = await isolatedDatabase("pressroom_pool_test");
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    db = createDb({ url: database.url, schema: "public", max: 3, logger: createLogger("pool-test", "info", sink) });
  });

  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it("survives the server terminating its idle connections", async () => {
    await Promise.all(Array.from({ length: 3 }, () => sql`select pg_sleep(0.05)`.execute(db)));

    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    let terminated = 0;
    try {
      const { rowCount } = await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and application_name = 'public'",
      );
      terminated = rowCount ?? 0;
      assert.ok(terminated >= 1, "the pool had idle connections to end");
    } finally {
      await admin.end();
    }

    // Each ended connection is noticed when its socket closes; wait for all of them.
    const lost = () => logLines.filter((line) => line.includes("idle database connection lost"));
    const deadline = Date.now() + 5_000;
    while (lost().length < terminated && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(lost().length, terminated, "every lost connection was logged");
    for (const line of lost()) assert.equal(JSON.parse(line).level, "warn");

    const { rows } = await sql<{ answer: number }>`select 42 as answer`.execute(db);
    assert.deepEqual(rows, [{ answer: 42 }]);
  });

  it("survives the server ending a connection held between two queries of a transaction", async () => {
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const transaction = db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        // Between two queries (as a transaction awaiting a publish), the server ends the connection.
        await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state like 'idle in transaction%'");
        await new Promise((resolve) => setTimeout(resolve, 300));
        await sql`select 2`.execute(trx);
      });
      await assert.rejects(transaction);
    } finally {
      await admin.end();
    }
    assert.ok(logLines.some((line) => line.includes("database connection in use lost")), "the loss was logged");
    const { rows } = await sql<{ answer: number }>`select 42 as answer`.execute(db);
    assert.deepEqual(rows, [{ answer: 42 }]);
  });
});

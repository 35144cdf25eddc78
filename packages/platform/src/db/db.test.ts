import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { randomBytes } from "node:crypto";
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { createLogger } from "../logger";
import { createDb } from "./db";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/**
 * A service's connection pool when PostgreSQL ends its idle connections (a
 * restart, a failover, an operator's pg_terminate_backend): the process keeps
 * running, the loss is logged, and the next query gets a fresh connection.
 */
describe("a service's database pool", () => {
  // The pool's connections carry its schema as their application_name: the test ends only those.
  const schema = `pool_test_${randomBytes(4).toString("hex")}`;
  let db: Kysely<unknown>;
  const logLines: string[] = [];
  const admin = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect().catch((err: unknown) => {
      throw new Error(
        `PostgreSQL does not answer at ${new URL(DATABASE_URL).host} (${String(err)}). Start it, or run ./scripts/test.sh, which starts a private one, or set DATABASE_URL.`,
      );
    });
    return client;
  };

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    db = createDb({ url: DATABASE_URL, schema, max: 3, logger: createLogger("pool-test", "info", sink) });
  });

  after(async () => {
    await db?.destroy();
  });

  it("survives the server terminating its idle connections", async () => {
    await Promise.all(Array.from({ length: 3 }, () => sql`select pg_sleep(0.05)`.execute(db)));

    const client = await admin();
    let terminated = 0;
    try {
      const { rowCount } = await client.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1", [schema]);
      terminated = rowCount ?? 0;
      assert.ok(terminated >= 1, "the pool had idle connections to end");
    } finally {
      await client.end();
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
    const client = await admin();
    try {
      const transaction = db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        // Between two queries (as a transaction awaiting a publish), the server ends the connection.
        await client.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and state like 'idle in transaction%'", [
          schema,
        ]);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await sql`select 2`.execute(trx);
      });
      await assert.rejects(transaction);
    } finally {
      await client.end();
    }
    assert.ok(
      logLines.some((line) => line.includes("database connection in use lost")),
      "the loss was logged",
    );
    const { rows } = await sql<{ answer: number }>`select 42 as answer`.execute(db);
    assert.deepEqual(rows, [{ answer: 42 }]);
  });
});

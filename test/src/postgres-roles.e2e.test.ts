import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DEMO_API_KEY } from "@pressroom/domain";
import { DATABASE_SERVICES, SERVICE_NAMES, type DatabaseService } from "@pressroom/stack";
import pg from "pg";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { eventually } from "./test-support/webhook-receiver";

/**
 * Least privilege in PostgreSQL (issue 30): each service logs in as a role of
 * its own that owns its schema and nothing else, made by the one-off migrate
 * step with the admin's credential, which no running service holds.
 */

const roleOf = (url: string) => decodeURIComponent(new URL(url).username);

describe("each service's own PostgreSQL role", () => {
  let h: Harness;
  let admin: pg.Client;
  let roles: Record<DatabaseService, string>;

  before(async () => {
    h = await startHarness();
    admin = new pg.Client({ connectionString: h.stack.databaseUrl });
    await admin.connect();
    roles = Object.fromEntries(DATABASE_SERVICES.map((service) => [service, roleOf(h.stack.databaseUrls[service])])) as Record<DatabaseService, string>;
  });

  after(async () => {
    await admin?.end();
    await h?.stop();
  });

  /** Runs one statement as a service's role, on a connection of the test's own. */
  async function asService<R extends pg.QueryResultRow>(service: DatabaseService, text: string): Promise<R[]> {
    const client = new pg.Client({ connectionString: h.stack.databaseUrls[service] });
    await client.connect();
    try {
      return (await client.query<R>(text)).rows;
    } finally {
      await client.end();
    }
  }

  it("every service works on its own role: a sync render is admitted, rendered, stored, charged and audited", async () => {
    const response = await h.api.post("/v1/render", { html: "<h1>Hello {{name}}</h1>", data: { name: "roles" } }, { key: DEMO_API_KEY });
    assert.equal(response.status, 200, response.text);
    const { id, url } = response.json as { id: string; url: string };
    const download = await fetch(url);
    assert.equal(download.status, 200);
    assert.equal(
      Buffer.from(await download.arrayBuffer())
        .subarray(0, 5)
        .toString("latin1"),
      "%PDF-",
    );
    const charged = await admin.query("select 1 from metering.charges where job_id = $1", [id]);
    assert.equal(charged.rowCount, 1, "metering charged the job");
    const stored = await admin.query("select 1 from storage.outputs where job_id = $1", [id]);
    assert.equal(stored.rowCount, 1, "storage registered the output");
    await eventually(
      "webhook's audit projection of the job",
      async () => ((await admin.query("select 1 from webhook.audit_job_events where job_id = $1", [id])).rowCount ? true : undefined),
      30_000,
    );
  });

  it("identity's role cannot read metering's schema", async () => {
    await assert.rejects(asService("identity", "select * from metering.usage_periods"), { code: "42501", message: /permission denied for schema metering/ });
  });

  it("render's role cannot read identity's API keys", async () => {
    await assert.rejects(asService("render", "select key_hash from identity.api_keys"), { code: "42501", message: /permission denied for schema identity/ });
  });

  it("each role has no power, may use its own schema only, and may not create in public", async () => {
    for (const service of DATABASE_SERVICES) {
      const [me] = await asService<Record<string, unknown>>(
        service,
        `select r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolreplication, r.rolbypassrls,
                has_schema_privilege('public', 'CREATE') as create_in_public,
                array(select nspname::text from pg_namespace
                      where has_schema_privilege(oid, 'USAGE') and nspname not in ('public', 'pg_catalog', 'information_schema') and nspname not like 'pg\\_%'
                      order by nspname) as usable
         from pg_roles r where r.rolname = current_user`,
      );
      assert.deepEqual(
        me,
        {
          rolsuper: false,
          rolcreaterole: false,
          rolcreatedb: false,
          rolreplication: false,
          rolbypassrls: false,
          create_in_public: false,
          usable: [service],
        },
        service,
      );
    }
  });

  it("each schema, and everything in it, is owned by its service's role", async () => {
    const { rows } = await admin.query<{ schema: string; owner: string; what: string }>(
      `select nspname as schema, pg_get_userbyid(nspowner) as owner, 'schema' as what from pg_namespace where nspname = any($1)
       union all
       select n.nspname, pg_get_userbyid(c.relowner), c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = any($1)
       union all
       select n.nspname, pg_get_userbyid(p.proowner), p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = any($1)`,
      [DATABASE_SERVICES],
    );
    for (const service of DATABASE_SERVICES) assert.ok(rows.filter((r) => r.schema === service).length > 1, `${service} has objects`);
    assert.deepEqual(
      rows.filter((r) => r.owner !== roles[r.schema as DatabaseService]),
      [],
    );
  });

  it("no running service's connection is a superuser, and each service connects as its own role", async () => {
    type Backend = { usename: string; application_name: string; rolsuper: boolean; rolcreaterole: boolean };
    // Readiness pings the database, so each service holds a connection right after.
    const backends = await eventually(
      "a connection of every service that keeps a schema",
      async () => {
        for (const name of SERVICE_NAMES) await fetch(`http://127.0.0.1:${h.stack.ports.health[name]}/readyz`);
        const { rows } = await admin.query<Backend>(
          `select a.usename, a.application_name, r.rolsuper, r.rolcreaterole
           from pg_stat_activity a join pg_roles r on r.rolname = a.usename
           where a.datname = current_database() and a.pid <> pg_backend_pid()`,
        );
        return DATABASE_SERVICES.every((service) => rows.some((r) => r.application_name === service)) ? rows : undefined;
      },
      30_000,
    );
    for (const backend of backends) {
      assert.ok(DATABASE_SERVICES.includes(backend.application_name as DatabaseService), `only the services are connected: ${JSON.stringify(backend)}`);
      assert.equal(backend.usename, roles[backend.application_name as DatabaseService], `${backend.application_name} connects as its own role`);
      assert.equal(backend.rolsuper, false, `${backend.application_name} is no superuser`);
      assert.equal(backend.rolcreaterole, false, `${backend.application_name} may not create roles`);
    }
  });

  it("no service is given the admin's credential, and no database password reaches a log line", () => {
    const passwords = DATABASE_SERVICES.map((service) => decodeURIComponent(new URL(h.stack.databaseUrls[service]).password));
    assert.ok(passwords.every((password) => password.length >= 32));
    assert.deepEqual(
      passwords.filter((password) => h.stack.output().includes(password)),
      [],
    );
    const adminUrl = h.stack.databaseUrl;
    for (const [name, proc] of h.stack.services.processes) {
      assert.ok(!Object.values(proc.env).includes(adminUrl), `${name} holds the admin's URL`);
      assert.equal(proc.env.DATABASE_ADMIN_URL, undefined, name);
    }
    assert.equal(h.stack.services.processes.get("gateway")!.env.DATABASE_URL, undefined, "the gateway holds no database credential");
  });

  endOfSuiteChecks(() => h);
});

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { provisionServiceRole, scramVerifier } from "./roles";

const SERVER_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

function withLogin(url: string, database: string, role?: string, password?: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  if (role) parsed.username = role;
  if (password) parsed.password = password;
  return parsed.toString();
}

async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

describe("a password's SCRAM verifier", () => {
  it("is the one PostgreSQL stores for that password and salt", async () => {
    const role = `scram_test_${randomBytes(4).toString("hex")}`;
    const password = `pw-${randomBytes(8).toString("hex")}`;
    const client = new pg.Client({ connectionString: SERVER_URL });
    await client.connect();
    try {
      await client.query("set password_encryption = 'scram-sha-256'");
      await client.query(`create role ${role} password ${pg.escapeLiteral(password)}`);
      const { rows } = await client.query<{ stored: string }>("select rolpassword as stored from pg_authid where rolname = $1", [role]);
      const stored = rows[0]!.stored;
      const [, iterations, salt] = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(stored)!;
      assert.equal(scramVerifier(password, Buffer.from(salt!, "base64"), Number(iterations)), stored);
      assert.notEqual(scramVerifier(`${password}x`, Buffer.from(salt!, "base64"), Number(iterations)), stored);
    } finally {
      await client.query(`drop role if exists ${role}`);
      await client.end();
    }
  });
});

/**
 * The admin step on a database whose schemas an earlier version migrated as
 * the admin: the service's role gets its schema and everything in it, no
 * power, and nothing of the other schema.
 */
describe("a service's role, made by the admin step", () => {
  const database = `roles_test_${randomBytes(4).toString("hex")}`;
  const role = `${database}_alpha`;
  const other = `${database}_beta`;
  const password = randomBytes(16).toString("hex");
  const adminUrl = withLogin(SERVER_URL, database);
  const serviceUrl = withLogin(SERVER_URL, database, role, password);

  before(async () => {
    await query(SERVER_URL, `create database ${database}`);
    // As an earlier version left it: both schemas made and migrated by the admin.
    for (const statement of [
      "create schema alpha",
      "create table alpha.items (id bigserial primary key, name text not null)",
      "create sequence alpha.numbers",
      "create view alpha.names as select name from alpha.items",
      "create function alpha.item_count() returns bigint language sql as 'select count(*) from alpha.items'",
      "create schema beta",
      "create table beta.secrets (value text)",
      "insert into beta.secrets values ('beta only')",
    ]) {
      await query(adminUrl, statement);
    }
    // A role of that name already exists, with powers and a membership it must lose.
    await query(SERVER_URL, `create role ${role} createdb createrole`);
    await query(SERVER_URL, `grant pg_read_all_data to ${role}`);
    await provisionServiceRole(adminUrl, "beta", withLogin(SERVER_URL, database, other, randomBytes(16).toString("hex")));
    await provisionServiceRole(adminUrl, "alpha", serviceUrl);
  });

  after(async () => {
    await query(SERVER_URL, `drop database if exists ${database} with (force)`);
    await query(SERVER_URL, `drop role if exists ${role}`);
    await query(SERVER_URL, `drop role if exists ${other}`);
  });

  it("logs in with no power: not a superuser, no CREATEROLE, no CREATEDB, a member of no other role", async () => {
    const [attributes] = await query(
      serviceUrl,
      `select rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls,
              (select count(*)::int from pg_auth_members where member = r.oid) as memberships
       from pg_roles r where rolname = current_user`,
    );
    assert.deepEqual(attributes, { rolsuper: false, rolcreaterole: false, rolcreatedb: false, rolreplication: false, rolbypassrls: false, memberships: 0 });
  });

  it("owns its schema and everything the admin had made in it", async () => {
    const owned = await query<{ what: string; owner: string }>(
      adminUrl,
      `select 'schema alpha' as what, pg_get_userbyid(nspowner) as owner from pg_namespace where nspname = 'alpha'
       union all select relkind::text || ' ' || relname, pg_get_userbyid(relowner) from pg_class where relnamespace = 'alpha'::regnamespace
       union all select 'function ' || proname, pg_get_userbyid(proowner) from pg_proc where pronamespace = 'alpha'::regnamespace`,
    );
    assert.equal(owned.length, 7, JSON.stringify(owned));
    assert.deepEqual(
      owned.filter((o) => o.owner !== role),
      [],
    );
  });

  it("works in its schema, and is refused the other schema and the public one", async () => {
    await query(serviceUrl, "insert into alpha.items (name) values ('one')");
    assert.deepEqual(await query(serviceUrl, "select alpha.item_count()::int as n"), [{ n: 1 }]);
    await query(serviceUrl, "create table alpha.added (id int)");
    await assert.rejects(query(serviceUrl, "select * from beta.secrets"), { code: "42501", message: /permission denied for schema beta/ });
    await assert.rejects(query(serviceUrl, "create table public.planted (id int)"), { code: "42501" });
    await assert.rejects(query(serviceUrl, `create role ${database}_made`), { code: "42501" });
  });

  it("refuses to adopt a superuser role, or another service's, and leaves them as they were", async () => {
    const root = `${database}_root`;
    await query(SERVER_URL, `create role ${root} superuser login`);
    try {
      await assert.rejects(provisionServiceRole(adminUrl, "alpha", withLogin(SERVER_URL, database, root, "pw")), /"roles_test_\w+_root", a superuser/);
      const [after] = await query<{ rolsuper: boolean }>(SERVER_URL, "select rolsuper from pg_roles where rolname = $1", [root]);
      assert.equal(after!.rolsuper, true, "the superuser kept its powers");
    } finally {
      await query(SERVER_URL, `drop role if exists ${root}`);
    }
    // beta's URL given to alpha's step: the role owns schema beta.
    await assert.rejects(provisionServiceRole(adminUrl, "alpha", withLogin(SERVER_URL, database, other, "pw")), /owns schema beta: another service's/);
    const [alpha] = await query<{ owner: string }>(adminUrl, "select pg_get_userbyid(nspowner) as owner from pg_namespace where nspname = 'alpha'");
    assert.equal(alpha!.owner, role, "alpha is still its own role's");
  });

  it("takes its own role again on the next run, its tables' TOAST and a session's temporary table beside it", async () => {
    await query(serviceUrl, "create table alpha.notes (body text)");
    const session = new pg.Client({ connectionString: serviceUrl });
    await session.connect();
    try {
      await session.query("create temporary table scratch (body text)");
      assert.deepEqual(await provisionServiceRole(adminUrl, "alpha", serviceUrl), { created: false });
    } finally {
      await session.end();
    }
  });

  it("refuses a service URL that names the admin's own role", async () => {
    const admin = new URL(SERVER_URL).username;
    await assert.rejects(provisionServiceRole(adminUrl, "alpha", withLogin(SERVER_URL, database, admin)), /not the admin's/);
    const [attributes] = await query<{ rolsuper: boolean }>(adminUrl, "select rolsuper from pg_roles where rolname = current_user");
    assert.equal(attributes!.rolsuper, true, "the admin kept its powers");
  });
});

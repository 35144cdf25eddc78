import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";
import pg from "pg";

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * PostgreSQL's SCRAM-SHA-256 verifier of a password (RFC 5802, as `CREATE ROLE … PASSWORD`
 * stores it), so that the password itself never reaches the server or its statement log.
 * The password's bytes are used as they are, as node-postgres does when it logs in.
 */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password, salt, iterations, 32, "sha256");
  const clientKey = createHmac("sha256", salted).update("Client Key").digest();
  const storedKey = createHash("sha256").update(clientKey).digest();
  const serverKey = createHmac("sha256", salted).update("Server Key").digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString("base64")}$${storedKey.toString("base64")}:${serverKey.toString("base64")}`;
}

/** The role, password and database a service's own URL names. */
function serviceLogin(url: string): { role: string; password: string; database: string } {
  const parsed = new URL(url);
  const role = decodeURIComponent(parsed.username);
  if (!IDENTIFIER.test(role)) throw new Error(`DATABASE_URL must name the service's own role (lower-case letters, digits and _), not "${role}"`);
  return { role, password: decodeURIComponent(parsed.password), database: decodeURIComponent(parsed.pathname.slice(1)) };
}

/** Attributes no service's role may have. */
const POWERS = {
  rolsuper: "nosuperuser",
  rolcreaterole: "nocreaterole",
  rolcreatedb: "nocreatedb",
  rolreplication: "noreplication",
  rolbypassrls: "nobypassrls",
};

/**
 * The admin half of a service's one-off step, run with a credential no service holds: makes
 * (or updates) the service's login role, named with its password by the service's own URL,
 * with none of the powers above and no other role's privileges; makes its schema, owned by that role (and hands it whatever
 * an earlier version's step created there as another role); grants it nothing else. The
 * database's `public` schema takes no objects from anyone. The migrations then run as the
 * role itself, so everything they create is its own.
 */
export async function provisionServiceRole(adminUrl: string, schema: string, serviceUrl: string): Promise<{ created: boolean }> {
  if (!IDENTIFIER.test(schema)) throw new Error(`invalid schema name "${schema}"`);
  const { role, password, database } = serviceLogin(serviceUrl);
  const admin = new pg.Client({ connectionString: adminUrl, application_name: `${schema}-provision` });
  await admin.connect();
  const id = pg.escapeIdentifier;
  try {
    await admin.query("begin");
    // Steps of one database run in parallel; GRANT and REVOKE on one object at once fail ("tuple concurrently updated").
    await admin.query("select pg_advisory_xact_lock(hashtext('pressroom.provision-roles'))");
    const { rows: here } = await admin.query<{ db: string; me: string }>("select current_database() as db, current_user as me");
    if (here[0]!.db !== database) throw new Error(`DATABASE_URL names database "${database}", DATABASE_ADMIN_URL "${here[0]!.db}": they must be the same`);
    if (here[0]!.me === role) throw new Error(`DATABASE_URL must name the service's own role, not the admin's ("${role}")`);

    const { rows: existing } = await admin.query<Record<keyof typeof POWERS, boolean>>(
      "select rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls from pg_roles where rolname = $1",
      [role],
    );
    await refuseToAdopt(admin, role, schema, existing[0]?.rolsuper ?? false);
    const secret = password ? ` password ${pg.escapeLiteral(scramVerifier(password))}` : "";
    if (existing.length === 0) {
      await admin.query(`create role ${id(role)} login${secret}`);
    } else {
      const drop = Object.entries(POWERS).flatMap(([power, none]) => (existing[0]![power as keyof typeof POWERS] ? [none] : []));
      await admin.query(`alter role ${id(role)} login ${drop.join(" ")}${secret}`);
      // Nor what another role would lend it (pg_read_all_data, the admin's own role…).
      const { rows: memberships } = await admin.query<{ name: string }>(
        "select pg_get_userbyid(roleid) as name from pg_auth_members where member = (select oid from pg_roles where rolname = $1)",
        [role],
      );
      for (const { name } of memberships) await admin.query(`revoke ${id(name)} from ${id(role)}`);
    }

    const { rows: owner } = await admin.query<{ owner: string }>("select pg_get_userbyid(nspowner) as owner from pg_namespace where nspname = $1", [schema]);
    if (owner.length === 0) await admin.query(`create schema ${id(schema)} authorization ${id(role)}`);
    else if (owner[0]!.owner !== role) await admin.query(`alter schema ${id(schema)} owner to ${id(role)}`);
    await handOver(admin, schema, role);

    await admin.query(`revoke all on schema ${id(schema)} from public`);
    await admin.query(`grant connect on database ${id(database)} to ${id(role)}`);
    await admin.query("revoke create on schema public from public");
    await admin.query("commit");
    return { created: existing.length === 0 };
  } catch (err) {
    await admin.query("rollback").catch(() => undefined);
    throw err;
  } finally {
    await admin.end();
  }
}

/**
 * A role the step must not take over: a superuser (making it a service's would strip the powers
 * of an operator's account, or leave them if stripping failed), or a role that owns another
 * schema, objects in one or a database (another service's role, or an operator's: the URL names
 * the wrong role). The step stops, naming it, and changes nothing. What PostgreSQL keeps for the
 * role's own tables elsewhere (their TOAST tables in pg_toast, its sessions' temporary tables)
 * is its own, not another schema's.
 */
async function refuseToAdopt(admin: pg.Client, role: string, schema: string, superuser: boolean): Promise<void> {
  if (superuser) throw new Error(`DATABASE_URL names "${role}", a superuser: a service's role must be one of its own, made by this step`);
  const { rows } = await admin.query<{ what: string }>(
    `select 'schema ' || nspname as what from pg_namespace where nspowner = (select oid from pg_roles where rolname = $1) and nspname <> $2
     union all
     select 'objects in schema ' || n.nspname from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where c.relowner = (select oid from pg_roles where rolname = $1) and n.nspname <> $2
         and n.nspname <> 'pg_toast' and n.nspname !~ '^pg_(toast_)?temp_'
     union all
     select 'database ' || datname from pg_database where datdba = (select oid from pg_roles where rolname = $1)
     limit 1`,
    [role, schema],
  );
  if (rows[0]) throw new Error(`DATABASE_URL names "${role}", which owns ${rows[0].what}: another service's or an operator's role, not this service's own`);
}

/**
 * Gives the role what another role owns in its schema: the tables, views and functions an
 * earlier version's migrations made as the admin. A table brings its indexes and the
 * sequences of its serial columns with it; standalone sequences follow.
 */
async function handOver(admin: pg.Client, schema: string, role: string): Promise<void> {
  const to = `owner to ${pg.escapeIdentifier(role)}`;
  const others = `relnamespace = (select oid from pg_namespace where nspname = $1) and pg_get_userbyid(relowner) <> $2`;
  const kinds: [string, string][] = [
    ["r", "table"],
    ["p", "table"],
    ["f", "foreign table"],
    ["v", "view"],
    ["m", "materialized view"],
    ["S", "sequence"],
  ];
  for (const [kind, statement] of kinds) {
    const { rows } = await admin.query<{ name: string }>(`select oid::regclass::text as name from pg_class where relkind = $3 and ${others}`, [
      schema,
      role,
      kind,
    ]);
    for (const { name } of rows) await admin.query(`alter ${statement} ${name} ${to}`);
  }
  const { rows: routines } = await admin.query<{ name: string }>(
    "select oid::regprocedure::text as name from pg_proc where pronamespace = (select oid from pg_namespace where nspname = $1) and pg_get_userbyid(proowner) <> $2",
    [schema, role],
  );
  for (const { name } of routines) await admin.query(`alter routine ${name} ${to}`);
}

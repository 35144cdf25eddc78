import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { seal, sealingPrivateKey, sealingPublicKey, unseal } from "@pressroom/platform";
import { isolatedDatabase } from "@pressroom/stack";
import { connect } from "nats";
import pg from "pg";
import { provisionServiceRole, scramVerifier } from "../../packages/platform/src/db/roles";
import { bundledNats, checkNatsConf, runBundledNats } from "./test-support/bundled-nats";
import { evaluation, NATS_USERS } from "./test-support/chart-renders";
import { component, type K8sObject, ofKind, settingsSecret } from "./test-support/helm";
import { configProblems } from "./test-support/service-configs";
import { deploymentOf, effectiveEnv, MIGRATED, SERVICES } from "./test-support/workloads";

/**
 * Every value the chart generates at install (the NATS passwords, PostgreSQL's passwords in
 * their URLs, the output signing secret, the webhook secrets' sealing key, the two sealing key
 * pairs of the jobs' secrets and destinations), drawn afresh by
 * each render, is accepted by what reads it: the real nats-server with the rendered nats.conf
 * and a login as each user, PostgreSQL with a role made from each URL as the provision step
 * makes it and a login through node-postgres, and each container's config schema. A digit-first
 * NATS password (about 0.6 % of draws) once kept the bundled NATS from starting (issue 45).
 */

const DRAWS = 20;

describe("generated values are accepted by what reads them, over many draws (issue 45)", () => {
  let database: { url: string; drop(): Promise<void> };
  let name: string;
  let dir: string;
  before(async () => {
    database = await isolatedDatabase("pressroom_chartgen");
    name = new URL(database.url).pathname.slice(1);
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-chart-generated-"));
  });
  after(async () => {
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query(`drop role if exists ${pg.escapeIdentifier(`${name}_admin`)}`).finally(() => admin.end());
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A URL of the bundled PostgreSQL's, pointed at the test server (same role, password and database). */
  const here = (url: string): string => {
    const local = new URL(url);
    const server = new URL(database.url);
    local.host = server.host;
    return local.toString();
  };
  const loginAs = async (url: string): Promise<string> => {
    const client = new pg.Client({ connectionString: here(url) });
    await client.connect();
    try {
      return (await client.query<{ me: string }>("select current_user as me")).rows[0]!.me;
    } finally {
      await client.end();
    }
  };

  it(`${DRAWS} installs: NATS starts and lets each user in, each PostgreSQL URL logs in, every container's settings parse`, async () => {
    const seen = new Set<string>();
    for (let draw = 0; draw < DRAWS; draw++) {
      // The database named as the test's own, so that the roles the URLs name are the test database's.
      const objects = evaluation({ set: [`postgresql.database=${name}`, `postgresql.username=${name}_admin`], fresh: true });
      const secret = settingsSecret<K8sObject & { stringData: Record<string, string> }>(objects)!.stringData;
      for (const value of Object.values(secret)) seen.add(value);

      const nats = bundledNats(objects);
      assert.deepEqual(Object.keys(nats.passwords).sort(), [...NATS_USERS].sort());
      const check = checkNatsConf(path.join(dir, `draw-${draw}`), nats);
      assert.ok(check.ok, `draw ${draw}: nats-server -t: ${check.output}`);
      const server = await runBundledNats(path.join(dir, `draw-${draw}`), nats);
      try {
        for (const [user, pass] of Object.entries(nats.passwords)) await (await connect({ servers: server.url, user, pass, maxReconnectAttempts: 0 })).close();
      } finally {
        await server.stop();
      }

      const adminUrl = new URL(secret.DATABASE_ADMIN_URL!);
      assert.equal(decodeURIComponent(adminUrl.password), secret.POSTGRES_PASSWORD, "the bundled server's superuser password is the admin URL's");
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      try {
        const role = pg.escapeIdentifier(`${name}_admin`);
        await admin.query(`drop role if exists ${role}`);
        await admin.query(`create role ${role} login password ${pg.escapeLiteral(scramVerifier(secret.POSTGRES_PASSWORD!))}`);
      } finally {
        await admin.end();
      }
      assert.equal(await loginAs(secret.DATABASE_ADMIN_URL!), `${name}_admin`);
      for (const service of MIGRATED) {
        const url = secret[`DATABASE_URL_${service.toUpperCase()}`]!;
        await provisionServiceRole(database.url, service, here(url));
        assert.equal(await loginAs(url), `${name}_${service}`, `draw ${draw}: ${service}`);
      }

      const problems = SERVICES.flatMap((service) =>
        deploymentOf(objects, service).spec.template.spec.containers.flatMap((c) =>
          configProblems(c.name, effectiveEnv(c, objects), path.join(dir, `draw-${draw}`, c.name)),
        ),
      );
      assert.deepEqual(problems, [], `draw ${draw}`);

      // Each sealing key (render's, and the webhook service's for destinations) and the gateway's certificate of it, read as
      // the services read them, are a pair in every draw, and neither private key opens what is sealed to the other pair.
      const keys = ["sealing", "destination-sealing"].map((pair) => {
        const key = (ofKind(objects, "Secret").find((o) => component(o) === pair)!.stringData as Record<string, string>)["sealing.key"]!;
        const certificate = (ofKind(objects, "ConfigMap").find((o) => component(o) === pair)!.data as Record<string, string>)["sealing.crt"]!;
        assert.equal(unseal(sealingPrivateKey(key), seal(sealingPublicKey(certificate), `draw ${draw}`, "p"), "p"), `draw ${draw}`, `draw ${draw}: ${pair}`);
        seen.add(key);
        return { key, certificate };
      });
      const render = keys[0]!;
      const webhook = keys[1]!;
      assert.throws(() => unseal(sealingPrivateKey(render.key), seal(sealingPublicKey(webhook.certificate), `draw ${draw}`, "p"), "p"), `draw ${draw}`);
      assert.throws(() => unseal(sealingPrivateKey(webhook.key), seal(sealingPublicKey(render.certificate), `draw ${draw}`, "p"), "p"), `draw ${draw}`);
    }
    // Each draw generated its own values: 7 NATS passwords, 6 PostgreSQL passwords, 3 keys.
    assert.ok(seen.size >= DRAWS * 16, `${seen.size} distinct generated values`);
  });

  it("the config check bites: a signing secret too short is refused as storage would refuse it", () => {
    const objects = evaluation({ set: ["secrets.outputSigningSecret=short"] });
    const container = deploymentOf(objects, "storage").spec.template.spec.containers[0]!;
    const problems = configProblems(container.name, effectiveEnv(container, objects), path.join(dir, "control"));
    assert.deepEqual(problems, ["storage: OUTPUT_SIGNING_SECRET: must be at least 32 characters"]);
  });
});

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { chartTopology, NATS_COMPONENTS, natsPermissions } from "@pressroom/platform";
import { connect } from "nats";
import { stringify } from "yaml";
import { bundledNats, checkNatsConf, runBundledNats } from "./test-support/bundled-nats";
import { evaluation, FREE_UPGRADES, NATS_USERS, rendered } from "./test-support/chart-renders";
import { component, type K8sObject, ofKind, render, renderError, settingsSecret } from "./test-support/helm";
import { allContainers, type Container, deploymentOf, SERVICES } from "./test-support/workloads";

/** The bundled NATS's users: the code's allow-lists, each component connecting as itself. */

describe("the bundled NATS's users", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-chart-nats-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const natsConf = (set: string[]): string => {
    const config = ofKind<K8sObject & { data: Record<string, string> }>(evaluation({ set: ["nats.auth.enabled=true", ...set] }), "ConfigMap").find(
      (c) => component(c) === "nats",
    );
    assert.ok(config, "no ConfigMap of the bundled NATS");
    return config.data["nats.conf"]!;
  };
  const assertUsers = (text: string, users: Record<string, { publish: string[]; subscribe: string[] }>) => {
    for (const name of NATS_COMPONENTS) {
      const line = text.split("\n").find((l) => l.includes(`user: ${name},`));
      assert.ok(line, `no NATS user ${name}`);
      const [publish, subscribe] = [...line.matchAll(/allow: \[([^\]]*)\]/g)].map((m) => JSON.parse(`[${m[1]}]`) as string[]);
      assert.deepEqual({ publish, subscribe }, users[name], `${name}'s permissions`);
    }
  };

  it("with storage's own output bucket, render and storage are allowed that bucket", () => {
    const text = natsConf(["storage.env.OUTPUT_BUCKET=documents"]);
    assertUsers(text, natsPermissions("documents"));
    assert.doesNotMatch(text, /outputs/);
  });

  it("are the code's allow-lists, in a configuration the real nats-server accepts", () => {
    const text = natsConf([]);
    assertUsers(text, chartTopology().users);
    const check = checkNatsConf(path.join(dir, "allow-lists"), bundledNats(rendered("evaluation")));
    assert.ok(check.ok, `nats-server -t: ${check.output}`);
  });

  /**
   * nats-server reads a $VARIABLE's value as configuration: unquoted, a password like these (a
   * number, a date, a boolean, a comment) fails the server's start, or stops short of itself.
   */
  const HOSTILE = ["7K9xQ2mL", "3e5", "3Gi7aa", "0x1F", "12:30", "2026-11-27T10:00:00Z", "true", "a#b", "a b", "$HOME", "a\\d", 'say "hi"', "{x}", "[1]"];

  it("start and let each user in with passwords nats-server would misread unquoted, and no one with a wrong one", async () => {
    const passwords = Object.fromEntries(NATS_USERS.map((user, i) => [user, HOSTILE[i]!]));
    const more = HOSTILE.slice(NATS_USERS.length);
    for (const [round, set] of [passwords, Object.fromEntries(NATS_USERS.map((user, i) => [user, more[i % more.length]!]))].entries()) {
      const values = path.join(dir, `hostile-${round}.yaml`);
      writeFileSync(values, stringify({ secrets: { natsPasswords: set } }));
      const nats = bundledNats(evaluation({ valuesFiles: [values] }));
      assert.deepEqual(nats.passwords, set, "the Secret holds the passwords given");
      const check = checkNatsConf(path.join(dir, `hostile-${round}`), nats);
      assert.ok(check.ok, `nats-server -t: ${check.output}`);
      const server = await runBundledNats(path.join(dir, `hostile-${round}`), nats);
      try {
        for (const [user, pass] of Object.entries(set)) {
          const nc = await connect({ servers: server.url, user, pass, maxReconnectAttempts: 0 });
          await nc.close();
          await assert.rejects(
            connect({ servers: server.url, user, pass: `${pass}x`, maxReconnectAttempts: 0 }),
            /AUTHORIZATION_VIOLATION|Authorization/i,
            user,
          );
        }
      } finally {
        await server.stop();
      }
    }
  });

  it("refuse a password the single quotes cannot hold", () => {
    for (const value of ["it's", "two\nlines"]) {
      const file = path.join(dir, "quote.yaml");
      writeFileSync(file, stringify({ secrets: { natsPasswords: { render: value } } }));
      assert.match(renderError({ valuesFiles: [file], set: [FREE_UPGRADES] }), /natsPasswords\/render.*does not match pattern/);
    }
  });
});

describe("NATS with a user per service by default (issue 30)", () => {
  const credentialsOf = (c: Container) => ({
    user: (c.env ?? []).find((e) => e.name === "NATS_USER")?.value,
    passwordKey: (c.env ?? []).find((e) => e.name === "NATS_PASSWORD")?.valueFrom?.secretKeyRef?.key,
  });
  /** Each service's NATS credentials, and the provision step's (the container that runs the NATS provisioning). */
  const natsCredentials = (objects: K8sObject[]): Record<string, { user?: string; passwordKey?: string }> => {
    const provision = allContainers(objects).find(({ container }) =>
      /provision-main\.js/.test([...(container.command ?? []), ...(container.args ?? [])].join(" ")),
    );
    assert.ok(provision, "no NATS provisioning step");
    return {
      ...Object.fromEntries(
        SERVICES.map((service) => [service, credentialsOf(deploymentOf(objects, service).spec.template.spec.containers.find((c) => c.name === service)!)]),
      ),
      provision: credentialsOf(provision.container),
    };
  };

  it("the evaluation install: the bundled server has the users, and each service connects as itself with its password from the Secret", () => {
    const objects = rendered("evaluation");
    const conf = ofKind<K8sObject & { data: Record<string, string> }>(objects, "ConfigMap").find((c) => component(c) === "nats")!.data["nats.conf"]!;
    assert.match(conf, /authorization \{/);
    for (const user of NATS_USERS) assert.match(conf, new RegExp(`user: ${user}, password: \\$NATS_PASSWORD_${user.toUpperCase()}_QUOTED,`));
    const credentials = natsCredentials(objects);
    for (const user of NATS_USERS) assert.deepEqual(credentials[user], { user, passwordKey: `NATS_PASSWORD_${user.toUpperCase()}` }, user);
  });

  it("the evaluation install generates a distinct password per user in its Secret", () => {
    const secret = settingsSecret<K8sObject & { stringData?: Record<string, string> }>(rendered("evaluation"))!;
    const passwords = NATS_USERS.map((user) => secret.stringData?.[`NATS_PASSWORD_${user.toUpperCase()}`] ?? "");
    assert.ok(
      passwords.every((p) => p.length >= 32),
      "every password is generated",
    );
    assert.equal(new Set(passwords).size, NATS_USERS.length);
  });

  it("the production example: each service connects as its own user, with its password from the operator's Secret", () => {
    const credentials = natsCredentials(rendered("production"));
    for (const user of NATS_USERS) assert.deepEqual(credentials[user], { user, passwordKey: `NATS_PASSWORD_${user.toUpperCase()}` }, user);
  });

  it("turning the users off is refused unless nats.auth.insecureNoAuth says the risk is accepted", () => {
    assert.match(renderError({ set: [FREE_UPGRADES, "nats.auth.enabled=false"] }), /nats\.auth\.insecureNoAuth=true/);
    const objects = evaluation({ set: ["nats.auth.enabled=false", "nats.auth.insecureNoAuth=true"] });
    const conf = ofKind<K8sObject & { data: Record<string, string> }>(objects, "ConfigMap").find((c) => component(c) === "nats")!.data["nats.conf"]!;
    assert.doesNotMatch(conf, /authorization/);
    for (const user of NATS_USERS) assert.deepEqual(natsCredentials(objects)[user], { user: undefined, passwordKey: undefined }, user);
  });

  it("an external NATS needs its users' passwords (or the operator's Secret), or the named risk", () => {
    const external = [FREE_UPGRADES, "nats.enabled=false", "nats.url=nats://nats.nats:4222", "render.keda.enabled=false"];
    assert.match(renderError({ set: external }), /secrets\.natsPasswords\.gateway is required with an external NATS/);
    const passwords = NATS_USERS.map((user) => `secrets.natsPasswords.${user}=pw-${user}-7a1c`);
    assert.ok(render({ set: [...external, ...passwords] }).length > 0);
    assert.ok(render({ set: [...external, "existingSecret=from-vault"] }).length > 0);
    assert.ok(render({ set: [...external, "nats.auth.enabled=false", "nats.auth.insecureNoAuth=true"] }).length > 0);
  });
});

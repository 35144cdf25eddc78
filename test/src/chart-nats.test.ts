import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { chartTopology, NATS_COMPONENTS, natsPermissions } from "@pressroom/platform";
import { evaluation, FREE_UPGRADES, NATS_USERS, rendered } from "./test-support/chart-renders";
import { component, type K8sObject, ofKind, render, renderError } from "./test-support/helm";
import { allContainers, type Container, deploymentOf, SERVICES } from "./test-support/workloads";

/** The bundled NATS's users: the code's allow-lists, each component connecting as itself. */

describe("the bundled NATS's users", () => {
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
    const dir = mkdtempSync(path.join(tmpdir(), "pressroom-nats-conf-"));
    try {
      const file = path.join(dir, "nats.conf");
      writeFileSync(file, text.replace("/data/jetstream", path.join(dir, "js")));
      const passwords = Object.fromEntries(NATS_COMPONENTS.map((name) => [`NATS_PASSWORD_${name.toUpperCase()}`, `pw-${name}`]));
      const binary = existsSync("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : "nats-server";
      const check = spawnSync(binary, ["-c", file, "-t"], { env: { ...process.env, ...passwords, POD_NAME: "nats-0" }, encoding: "utf8" });
      assert.equal(check.status, 0, `nats-server -t: ${check.stdout}${check.stderr}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
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
    for (const user of NATS_USERS) assert.match(conf, new RegExp(`user: ${user}, password: \\$NATS_PASSWORD_${user.toUpperCase()},`));
    const credentials = natsCredentials(objects);
    for (const user of NATS_USERS) assert.deepEqual(credentials[user], { user, passwordKey: `NATS_PASSWORD_${user.toUpperCase()}` }, user);
  });

  it("the evaluation install generates a distinct password per user in its Secret", () => {
    const secret = ofKind<K8sObject & { stringData?: Record<string, string> }>(rendered("evaluation"), "Secret")[0]!;
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

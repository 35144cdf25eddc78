import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { parse } from "yaml";
import { databasePoolSize as webhookPoolSize } from "../../services/webhook/src/config";
import { everyRender, evaluation, FREE_UPGRADES, NATS_USERS, rendered } from "./test-support/chart-renders";
import { type K8sObject, ofKind, PRODUCTION_VALUES, render, renderError, settingsSecret } from "./test-support/helm";
import { parseConfig } from "./test-support/service-configs";
import { allContainers, type Container, deploymentOf, effectiveEnv, MIGRATED, SERVICES, type Workload } from "./test-support/workloads";

/** The provision Job (migrations, then the NATS provisioning) and each service's own database credential. */

const steps = (job: Workload): Container[] => [...(job.spec.template.spec.initContainers ?? []), ...job.spec.template.spec.containers];
const commandOf = (c: Container): string => [...(c.command ?? []), ...(c.args ?? [])].join(" ");
const isProvision = (c: Container): boolean => /packages\/platform\/dist\/nats\/provision-main\.js/.test(commandOf(c));
const migrationOf = (c: Container): string | undefined =>
  /(^|\s)(node\s+)?(\S*\/)?dist\/migrate\.js\b/.test(commandOf(c)) ? /pressroom\/([a-z]+)[:@]/.exec(c.image)?.[1] : undefined;
const setupJobs = (objects: K8sObject[]): Workload[] =>
  ofKind<Workload>(objects, "Job").filter((job) => steps(job).some((c) => isProvision(c) || migrationOf(c)));

describe("migrations and NATS provisioning run once, before the services", () => {
  const hooks = (o: K8sObject): string[] =>
    (o.metadata.annotations?.["helm.sh/hook"] ?? "")
      .split(",")
      .map((h) => h.trim())
      .filter(Boolean);
  const weight = (o: K8sObject): number => Number(o.metadata.annotations?.["helm.sh/hook-weight"] ?? 0);

  it("with external NATS and Postgres the Job is a pre-install,pre-upgrade hook", () => {
    const jobs = setupJobs(rendered("production"));
    assert.equal(jobs.length, 1, `${jobs.length} migration/provision Jobs`);
    assert.deepEqual(hooks(jobs[0]!).sort(), ["pre-install", "pre-upgrade"]);
  });

  it("one Job runs the five migrations, each in its service's image, then the NATS provisioning", () => {
    for (const name of ["evaluation", "production"] as const) {
      const jobs = setupJobs(rendered(name));
      assert.equal(jobs.length, 1, `${name}: ${jobs.length} migration/provision Jobs`);
      const sequence = steps(jobs[0]!).map((c) => (isProvision(c) ? "provision" : (migrationOf(c) ?? `other: ${c.name}`)));
      assert.deepEqual(sequence.filter((s) => s !== "provision").sort(), [...MIGRATED].sort(), `${name}: ${sequence.join(" → ")}`);
      assert.equal(sequence.at(-1), "provision", `${name}: ${sequence.join(" → ")}`);
      assert.equal(sequence.filter((s) => s === "provision").length, 1);
      for (const c of steps(jobs[0]!)) {
        const service = migrationOf(c);
        if (service) assert.equal(c.workingDir ?? `/app/services/${service}`, `/app/services/${service}`, `${c.name}: workingDir`);
      }
    }
  });

  it("render, metering and the NATS provisioning step share the render deadline and the queue's maximum wait", () => {
    const objects = evaluation({ set: ["render.deadlineMs=45000", "render.maxQueueWaitMs=600000"] });
    for (const service of ["render", "metering"]) {
      const env = effectiveEnv(deploymentOf(objects, service).spec.template.spec.containers[0]!, objects);
      assert.equal(env.RENDER_DEADLINE_MS, "45000", service);
      assert.equal(env.RENDER_MAX_QUEUE_WAIT_MS, "600000", service);
    }
    const provision = steps(setupJobs(objects)[0]!).find(isProvision)!;
    assert.equal(provision.env?.find((e) => e.name === "RENDER_MAX_QUEUE_WAIT_MS")?.value, "600000", "the RENDER stream's max age");
  });

  it("each migration step gets its service's database URL and the admin's, and identity's also the key it seals the demo key's webhook secret with", () => {
    for (const name of ["evaluation", "production"] as const) {
      for (const c of steps(setupJobs(rendered(name))[0]!)) {
        const service = migrationOf(c);
        if (!service) continue;
        const secrets = (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => `${e.name}=${e.valueFrom!.secretKeyRef!.key}`);
        const expected = [
          "DATABASE_ADMIN_URL=DATABASE_ADMIN_URL",
          `DATABASE_URL=DATABASE_URL_${service.toUpperCase()}`,
          ...(service === "identity" ? ["WEBHOOK_SECRET_ENCRYPTION_KEY=WEBHOOK_SECRET_ENCRYPTION_KEY"] : []),
        ];
        assert.deepEqual(secrets.sort(), expected, `${name}: ${c.name}`);
      }
    }
  });

  it("what a pre-install hook Job reads exists before it: its ConfigMaps, Secrets and ServiceAccount are earlier hooks", () => {
    const objects = rendered("production");
    for (const job of setupJobs(objects).filter((j) => hooks(j).includes("pre-install"))) {
      const pod = job.spec.template.spec;
      const needed = [
        ...steps(job).flatMap((c) => [
          ...(c.envFrom ?? []).flatMap((e) => [e.configMapRef && ["ConfigMap", e.configMapRef.name], e.secretRef && ["Secret", e.secretRef.name]]),
          ...(c.env ?? []).flatMap((e) => [
            e.valueFrom?.configMapKeyRef && ["ConfigMap", e.valueFrom.configMapKeyRef.name],
            e.valueFrom?.secretKeyRef && ["Secret", e.valueFrom.secretKeyRef.name],
          ]),
        ]),
        ...(pod.volumes ?? []).flatMap((v) => [v.configMap && ["ConfigMap", v.configMap.name], v.secret && ["Secret", v.secret.secretName]]),
        pod.serviceAccountName && ["ServiceAccount", pod.serviceAccountName],
      ].filter((n): n is [string, string] => Array.isArray(n));
      for (const [kind, name] of needed) {
        const object = objects.find((o) => o.kind === kind && o.metadata.name === name);
        if (!object) continue;
        assert.ok(
          hooks(object).includes("pre-install") && weight(object) < weight(job),
          `${kind}/${name} is not created before the hook Job ${job.metadata.name}`,
        );
      }
    }
  });
});

describe("each service's own database credential (issue 30)", () => {
  type Secret = K8sObject & { stringData?: Record<string, string> };
  const secretRefs = (c: Container): string[] => (c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.key] : []));

  it("no service's pod references the admin's database URL, and each references its own database URL only, as DATABASE_URL", () => {
    for (const [name, objects] of everyRender()) {
      for (const service of SERVICES) {
        const pod = deploymentOf(objects, service).spec.template.spec;
        for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
          assert.deepEqual(c.envFrom?.filter((e) => e.secretRef) ?? [], [], `${name}: ${service} ${c.name} takes no whole Secret`);
          const database = secretRefs(c).filter((key) => key.startsWith("DATABASE"));
          assert.deepEqual(
            database,
            service === "gateway" || c.name === "chromium" || c.name === "postprocess" ? [] : [`DATABASE_URL_${service.toUpperCase()}`],
            `${name}: ${service} ${c.name}`,
          );
          for (const key of database) {
            assert.deepEqual(
              (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef?.key === key).map((e) => e.name),
              ["DATABASE_URL"],
              `${name}: ${service} ${c.name}`,
            );
          }
        }
      }
    }
  });

  it("the provision Job's migration steps are the only containers given the admin's database URL", () => {
    for (const [name, objects] of everyRender()) {
      const holders = allContainers(objects)
        .filter(({ container }) => secretRefs(container).includes("DATABASE_ADMIN_URL"))
        .map(({ workload, container }) => `${workload.kind} ${container.name}`);
      assert.deepEqual(holders.sort(), MIGRATED.map((service) => `Job migrate-${service}`).sort(), name);
    }
  });

  it("with the bundled PostgreSQL, the generated Secret gives each service a role and password of its own, apart from the admin's", () => {
    const secret = settingsSecret<Secret>(rendered("evaluation"))!.stringData!;
    const admin = new URL(secret.DATABASE_ADMIN_URL!);
    assert.equal(admin.username, "pressroom");
    const logins = MIGRATED.map((service) => new URL(secret[`DATABASE_URL_${service.toUpperCase()}`]!));
    assert.deepEqual(
      logins.map((url) => url.username),
      MIGRATED.map((service) => `pressroom_${service}`),
    );
    for (const url of logins) assert.equal(`${url.host}${url.pathname}`, `${admin.host}${admin.pathname}`);
    const passwords = [admin.password, ...logins.map((url) => url.password)];
    assert.equal(new Set(passwords).size, passwords.length, "every password is its own");
    assert.ok(passwords.every((password) => password.length >= 32));
  });

  it("with an external PostgreSQL, each service's URL is required and the admin's may be left out (the roles exist already)", () => {
    assert.match(
      renderError({ set: [FREE_UPGRADES, "postgresql.enabled=false"] }),
      /secrets\.databaseUrls\.identity is required with postgresql\.enabled=false/,
    );
    const objects = evaluation({
      set: [
        "postgresql.enabled=false",
        ...MIGRATED.map((service) => `secrets.databaseUrls.${service}=postgres://pressroom_${service}:pw-${service}@db.internal/pressroom`),
      ],
    });
    const secret = settingsSecret<Secret>(objects)!.stringData!;
    assert.equal(secret.DATABASE_ADMIN_URL, undefined);
    assert.equal(secret.DATABASE_URL_RENDER, "postgres://pressroom_render:pw-render@db.internal/pressroom");
    const adminRefs = allContainers(objects).flatMap(({ container }) =>
      (container.env ?? []).filter((e) => e.valueFrom?.secretKeyRef?.key === "DATABASE_ADMIN_URL"),
    );
    assert.equal(adminRefs.length, MIGRATED.length);
    assert.ok(
      adminRefs.every((e) => e.valueFrom!.secretKeyRef!.optional === true),
      "an absent admin URL skips the role step",
    );
  });
});

describe("PostgreSQL connections within the server's limit at the most replicas (issue 45)", () => {
  /** PostgreSQL keeps 3 connections for superusers (superuser_reserved_connections); the provision Job holds 2 (a migration's admin and role). */
  const KEPT = 3 + 2;
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-chart-pools-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Each database service's most connections: the pool its config reads, times its most replicas (an HPA's or KEDA's maximum, else its count). */
  const pools = (objects: K8sObject[]): Record<string, number> =>
    Object.fromEntries(
      MIGRATED.map((service) => {
        const deployment = deploymentOf(objects, service);
        const container = deployment.spec.template.spec.containers[0]!;
        const { config, problems } = parseConfig(service, effectiveEnv(container, objects), path.join(dir, service));
        assert.deepEqual(problems, [], service);
        const pool = service === "webhook" ? webhookPoolSize(config as { WEBHOOK_CONCURRENCY: number }) : (config!.DATABASE_POOL_MAX as number);
        const scaled = ofKind<K8sObject & { spec: { scaleTargetRef: { name: string }; maxReplicaCount?: number; maxReplicas?: number } }>(
          objects,
          "ScaledObject",
        )
          .concat(ofKind(objects, "HorizontalPodAutoscaler"))
          .find((s) => s.spec.scaleTargetRef.name === deployment.metadata.name);
        const replicas = scaled ? (scaled.spec.maxReplicaCount ?? scaled.spec.maxReplicas)! : deployment.spec.replicas!;
        return [service, replicas * pool];
      }),
    );
  const total = (objects: K8sObject[]) => Object.values(pools(objects)).reduce((a, b) => a + b, 0);

  it("the evaluation install: under the bundled server's max_connections, as it is started", () => {
    const objects = rendered("evaluation");
    const server = ofKind<Workload>(objects, "StatefulSet").find((s) => s.metadata.name.endsWith("-postgresql"))!;
    const args = server.spec.template.spec.containers[0]!.args ?? [];
    const maxConnections = Number(/^max_connections=(\d+)$/.exec(args[args.indexOf("-c") + 1] ?? "")?.[1]);
    assert.ok(maxConnections > 0, `postgres ${args.join(" ")}`);
    assert.ok(total(objects) + KEPT <= maxConnections, `${JSON.stringify(pools(objects))} + ${KEPT} > ${maxConnections}`);
  });

  it("the production example: under the max_connections its values give the external server", () => {
    const values = parse(readFileSync(PRODUCTION_VALUES, "utf8")) as { postgresql: { maxConnections: number } };
    // With the Secret the chart makes instead of the operator's, so that every setting can be read.
    const objects = render({
      valuesFiles: [PRODUCTION_VALUES],
      set: [
        "existingSecret=",
        "secrets.stripeSecretKey=sk_test_pools",
        "secrets.stripeWebhookSecret=whsec_pools",
        "secrets.webhookSecretEncryptionKey=" + "a1".repeat(32),
        ...MIGRATED.map((service) => `secrets.databaseUrls.${service}=postgres://pressroom_${service}:pw@db.internal/pressroom`),
        ...NATS_USERS.map((user) => `secrets.natsPasswords.${user}=pw-${user}`),
      ],
    });
    assert.ok(total(objects) + KEPT <= values.postgresql.maxConnections, `${JSON.stringify(pools(objects))} + ${KEPT} > ${values.postgresql.maxConnections}`);
    assert.ok(pools(objects).render! >= 40, "render's pool counts KEDA's 40 pods");
  });

  it("pools that could take more are refused at install, naming each service's share", () => {
    assert.match(
      renderError({ set: [FREE_UPGRADES, "render.keda.maxReplicas=60"] }),
      /pools at their most replicas \(identity 10, metering 20, render 240, storage 10, webhook 40\).*come to 330, over postgresql\.maxConnections \(200\)/,
    );
  });
});

describe("the provision Job waits for PostgreSQL and NATS instead of failing (issue 45)", () => {
  it("each migration waits provision.waitSeconds for PostgreSQL, the NATS step as long, both within the Job's deadline", () => {
    const objects = evaluation({ set: ["provision.waitSeconds=120"] });
    const [job] = setupJobs(objects);
    const env = (c: Container) => effectiveEnv(c, objects);
    for (const c of steps(job!).filter((step) => migrationOf(step))) assert.equal(env(c).DATABASE_WAIT_MS, "120000", c.name);
    const provision = steps(job!).find(isProvision)!;
    assert.equal(env(provision).NATS_CONNECT_ATTEMPTS, "240", "an attempt every half second");
    assert.ok((job!.spec as unknown as { activeDeadlineSeconds: number }).activeDeadlineSeconds > 2 * 120, "the deadline outlasts both waits");
  });
});

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { everyRender, evaluation, FREE_UPGRADES, rendered } from "./test-support/chart-renders";
import { type K8sObject, ofKind, renderError } from "./test-support/helm";
import { allContainers, type Container, deploymentOf, effectiveEnv, MIGRATED, SERVICES, type Workload } from "./test-support/workloads";

/** The provision Job (migrations, then the NATS provisioning) and each service's own database credential. */

describe("migrations and NATS provisioning run once, before the services", () => {
  const hooks = (o: K8sObject): string[] =>
    (o.metadata.annotations?.["helm.sh/hook"] ?? "")
      .split(",")
      .map((h) => h.trim())
      .filter(Boolean);
  const weight = (o: K8sObject): number => Number(o.metadata.annotations?.["helm.sh/hook-weight"] ?? 0);
  const steps = (job: Workload): Container[] => [...(job.spec.template.spec.initContainers ?? []), ...job.spec.template.spec.containers];
  const commandOf = (c: Container): string => [...(c.command ?? []), ...(c.args ?? [])].join(" ");
  const isProvision = (c: Container): boolean => /packages\/platform\/dist\/nats\/provision-main\.js/.test(commandOf(c));
  const migrationOf = (c: Container): string | undefined =>
    /(^|\s)(node\s+)?(\S*\/)?dist\/migrate\.js\b/.test(commandOf(c)) ? /pressroom\/([a-z]+)[:@]/.exec(c.image)?.[1] : undefined;
  const setupJobs = (objects: K8sObject[]): Workload[] =>
    ofKind<Workload>(objects, "Job").filter((job) => steps(job).some((c) => isProvision(c) || migrationOf(c)));

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
            service === "gateway" || c.name === "chromium" ? [] : [`DATABASE_URL_${service.toUpperCase()}`],
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
    const secret = ofKind<Secret>(rendered("evaluation"), "Secret")[0]!.stringData!;
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
    const secret = ofKind<Secret>(objects, "Secret")[0]!.stringData!;
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

/**
 * The smoke deploy: the six images built with podman (deploy/images.sh), the
 * chart rendered by the real helm, and the rendered provision Job and
 * Deployments run with `podman kube play`, with their Secrets and ConfigMaps.
 * There is no cluster: every pod is on the host's network with ports of its
 * own, and the services use the host's PostgreSQL (a fresh database) and a
 * private nats-server (deploy/README.md, "Smoke deploy", says what this cannot
 * show). Then one sync render, one image and one async render with a webhook
 * go through the gateway container, and everything is taken down.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { verifyWebhookSignature } from "@pressroom/client";
import { GRPC_PEERS, consumers, ensureGrpcCertificates, streams } from "@pressroom/platform";
import { databaseCredentials, distinctFreePorts, isolatedDatabase, REPO_ROOT, startPrivateNats, type PrivateNats } from "@pressroom/stack";
import { connect } from "nats";
import pg from "pg";
import { Api } from "./test-support/api";
import { NAMESPACE, render, type K8sObject } from "./test-support/helm";
import { COMPONENT_LABEL, KubePlay, podman, type ComponentPorts, type PlayedPod } from "./test-support/kube-play";
import { pdfInfo, pngSize } from "./test-support/pdf";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

const run = promisify(execFile);
const SERVICES = ["identity", "metering", "render", "storage", "webhook", "gateway"] as const;
const MIGRATED = ["identity", "metering", "render", "storage", "webhook"] as const;
/** Dependencies of the build only: none may be in a runtime image. */
const BUILD_TOOLS = ["typescript", "tsx", "eslint", "@bufbuild/buf", "turbo", "ts-proto", "esbuild"];
const VERSION = (JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;

async function readyz(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) })).status === 200;
  } catch {
    return false;
  }
}

describe("smoke deploy: the images and the rendered chart under podman kube play", { timeout: 20 * 60_000 }, () => {
  const receiver = new WebhookReceiver();
  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-smoke-"));
  const ports: Record<string, ComponentPorts> = {};
  let nats: PrivateNats;
  let database: { url: string; drop(): Promise<void> };
  let objects: K8sObject[];
  let play: KubePlay;
  let api: Api;
  let apiKey: string;
  const pods = new Map<string, PlayedPod>();

  before(async () => {
    // Installs podman, runc, catatonit and debootstrap when missing; layers are cached between runs.
    await run(path.join(REPO_ROOT, "deploy", "images.sh"), [VERSION], { timeout: 15 * 60_000, maxBuffer: 16 * 1024 * 1024 });
    await receiver.start();
    nats = await startPrivateNats(path.join(dir, "nats"));
    database = await isolatedDatabase("pressroom_smoke");
    const free = await distinctFreePorts(SERVICES.length * 2 + 2);
    for (const service of SERVICES) ports[service] = { health: free.pop()!, ...(service === "webhook" ? {} : { grpc: free.pop()! }) };
    ports.gateway!.http = free.pop()!;
    ports.provision = { health: free.pop()! };

    const credentials = databaseCredentials(database.url, () => randomBytes(16).toString("hex"));
    // The gRPC certificates as pre-made Secrets (no cert-manager here): each peer's files in a directory of its own, as a Secret volume holds them.
    const certificates = await ensureGrpcCertificates(path.join(dir, "grpc-tls"));
    const secretDirs: Record<string, string> = {};
    for (const peer of GRPC_PEERS) {
      const peerDir = path.join(dir, "grpc-secrets", peer);
      mkdirSync(peerDir, { recursive: true });
      for (const [from, to] of [
        [certificates[peer].ca, "ca.crt"],
        [certificates[peer].cert, "tls.crt"],
        [certificates[peer].key, "tls.key"],
      ] as const) {
        copyFileSync(from, path.join(peerDir, to));
        // Readable by the containers' uid 10001 (the Secret volume's 0440 with fsGroup, on a host without that group).
        chmodSync(path.join(peerDir, to), 0o644);
      }
      secretDirs[`smoke-grpc-${peer}`] = peerDir;
    }
    const values = {
      image: { tag: VERSION, pullPolicy: "Never" },
      grpcTls: { source: "secrets", secrets: Object.fromEntries(GRPC_PEERS.map((peer) => [peer, `smoke-grpc-${peer}`])) },
      publicBaseUrl: `http://127.0.0.1:${ports.gateway!.http}`,
      secrets: {
        databaseAdminUrl: credentials.adminUrl,
        databaseUrls: credentials.urls,
        outputSigningSecret: randomBytes(32).toString("hex"),
        webhookSecretEncryptionKey: randomBytes(32).toString("hex"),
      },
      billing: { provider: "local", local: { allowFreeUpgrades: true } },
      // The run's nats-server is anonymous (deploy/README.md, "What it cannot show").
      nats: { enabled: false, url: nats.url, auth: { enabled: false, insecureNoAuth: true } },
      postgresql: { enabled: false },
      // Chromium's DevTools port on the host's loopback: one of the run's own.
      render: { keda: { enabled: false }, chromium: { port: free.pop()! } },
      webhook: {
        env: { WEBHOOK_ALLOW_LOOPBACK: "true", WEBHOOK_DEV_TARGET_PORT: String(receiver.port), WEBHOOK_EXTRA_CA_FILE: "/etc/pressroom-smoke/ca.pem" },
      },
    };
    const valuesFile = path.join(dir, "values.json");
    writeFileSync(valuesFile, JSON.stringify(values));
    objects = render({ valuesFiles: [valuesFile] });
    play = new KubePlay(objects, NAMESPACE, {
      ports,
      hostFiles: [{ component: "webhook", hostPath: receiver.caFile, mountPath: "/etc/pressroom-smoke/ca.pem" }],
      secretDirs,
    });
    api = new Api(`http://127.0.0.1:${ports.gateway!.http}`);
  });

  after(async () => {
    await play?.down();
    await nats?.stop();
    await database?.drop();
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
  const component = (o: K8sObject) =>
    (o.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels[COMPONENT_LABEL] ?? "";

  it("the chart renders a Deployment per service, each on its own image, the admin pod on identity's, and the provision Job", () => {
    const admin = ofKind("Deployment").find((d) => component(d) === "admin")!;
    assert.ok(
      (admin.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image.endsWith(`pressroom/identity:${VERSION}`),
    );
    const deployments = ofKind("Deployment").filter((d) => d !== admin);
    assert.deepEqual(deployments.map(component).sort(), [...SERVICES].sort());
    for (const deployment of deployments) {
      const images = (deployment.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers.map((c) => c.image);
      assert.ok(
        images.every((image) => image.endsWith(`pressroom/${component(deployment)}:${VERSION}`)),
        `${deployment.metadata.name}: ${images.join(", ")}`,
      );
    }
    assert.equal(ofKind("Job").length, 1, "one provision Job");
  });

  it("the provision Job migrates every schema and provisions the JetStream topology, then exits 0", async () => {
    await play.createSecrets();
    const pod = await play.play(ofKind("Job")[0]!);
    const [main] = await play.containers(pod);
    assert.ok(main, "the Job's container exists");
    const exitCode = Number((await podman(["wait", main], 300_000)).trim());
    const logs = await podman(["logs", main]).catch(() => "");
    assert.equal(exitCode, 0, logs);

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ schema_name: string }>("SELECT schema_name FROM information_schema.schemata");
      for (const schema of MIGRATED)
        assert.ok(
          rows.some((r) => r.schema_name === schema),
          `schema ${schema} migrated`,
        );
    } finally {
      await client.end();
    }
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await nc.jetstreamManager();
      const consumer = await jsm.consumers.info(streams.RENDER, consumers.renderWorkers);
      assert.equal(consumer.stream_name, streams.RENDER);
    } finally {
      await nc.close();
    }
  });

  it("every service's pod starts read-only, as uid 10001 (render's Chromium as 10002, holding no credential) with no capabilities, and becomes ready", async () => {
    for (const service of SERVICES) pods.set(service, await play.play(ofKind("Deployment").find((d) => component(d) === service)!));
    for (const service of SERVICES) {
      await eventually(`${service} ready on ${ports[service]!.health}`, async () => ((await readyz(ports[service]!.health)) ? true : undefined), 120_000, 500);
      for (const container of await play.containers(pods.get(service)!)) {
        const [uid, readOnly, caps] = (await podman(["inspect", "--format", "{{.Config.User}}|{{.HostConfig.ReadonlyRootfs}}|{{.EffectiveCaps}}", container]))
          .trim()
          .split("|");
        const id = (await podman(["exec", container, "id", "-u"])).trim();
        const chromium = container.endsWith("-chromium");
        assert.equal(id, chromium ? "10002" : "10001", `${container} runs as ${uid}`);
        if (chromium) {
          const env = (await podman(["exec", container, "env"])).split("\n").map((line) => line.split("=")[0]!);
          assert.deepEqual(
            env.filter((name) => /^DATABASE_URL$|^NATS_|_SECRET|_KEY$|PASSWORD/.test(name)),
            [],
            `${container} holds credentials`,
          );
        }
        assert.equal(readOnly, "true", `${container}: read-only root filesystem`);
        assert.equal(caps, "[]", `${container}: capabilities ${caps}`);
        await assert.rejects(podman(["exec", container, "touch", "/app/written"]), `${container} cannot write outside /tmp`);
        assert.equal((await podman(["exec", container, "cat", "/proc/1/comm"])).trim(), "tini", `${container}: PID 1 is tini, which forwards signals`);
        const tools = await podman([
          "exec",
          container,
          "sh",
          "-c",
          `cd /app/node_modules && ls -d ${BUILD_TOOLS.join(" ")} 2>/dev/null; command -v npm gcc cc make || true`,
        ]);
        assert.equal(tools.trim(), "", `${container}: build tools in the image`);
      }
    }
  });

  it("a key made with the operator CLI in the admin pod, with the admin certificate", async () => {
    const [admin] = await play.containers(await play.play(ofKind("Deployment").find((d) => component(d) === "admin")!));
    const out = await podman([
      "exec",
      admin!,
      "node",
      "/app/packages/admin/dist/cli.js",
      "keys",
      "create",
      "--email",
      "smoke@example.com",
      "--plan",
      "business",
    ]);
    apiKey = out
      .split("\n")
      .find((line) => line.startsWith("pr_"))!
      .trim();
    assert.ok(apiKey, out);
  });

  it("a sync render through the gateway container serves its PDF", async () => {
    const response = await api.post("/v1/render", { html: "<h1>Hello {{name}}</h1>", data: { name: "Ada" } }, { key: apiKey });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.json.content_type, "application/pdf");
    const download = await api.download(response.json.url as string);
    assert.equal(download.status, 200);
    assert.ok(Number(pdfInfo(download.body).Pages) >= 1);
  });

  it("an image through the gateway container serves its PNG", async () => {
    const templates = (await api.get("/v1/templates")).json.templates as {
      id: string;
      output: string;
      width: number;
      height: number;
      device_scale_factor: number;
      sample_data: unknown;
    }[];
    const card = templates.find((t) => t.output === "png")!;
    const response = await api.post("/v1/image", { template_id: card.id, data: card.sample_data }, { key: apiKey });
    assert.equal(response.status, 200, response.text);
    const download = await api.download(response.json.url as string);
    assert.equal(download.status, 200);
    assert.deepEqual(pngSize(download.body), { width: card.width * card.device_scale_factor, height: card.height * card.device_scale_factor });
  });

  it("an async render calls the webhook back, signed with the key's secret", async () => {
    const secret = (await api.get("/v1/keys/webhook-secret", { key: apiKey })).json.secret as string;
    const accepted = await api.post("/v1/render", { html: "<p>later</p>", data: {}, webhook_url: receiver.url("/smoke") }, { key: apiKey });
    assert.equal(accepted.status, 202, accepted.text);
    const [callback] = await receiver.waitFor("/smoke", 1, 60_000);
    assert.equal(verifyWebhookSignature(callback!.rawBody, callback!.headers["x-service-signature"]!, secret), true);
    const body = JSON.parse(callback!.rawBody) as { job_id: string; type: string };
    assert.deepEqual([body.job_id, body.type], [accepted.json.id, "job.succeeded"]);
  });

  it("SIGTERM (podman stop) ends every service promptly with exit code 0", async () => {
    for (const service of [...SERVICES].reverse()) {
      const codes = await play.stop(pods.get(service)!, 30);
      for (const [container, code] of Object.entries(codes)) assert.equal(code, 0, `${container} exited ${code}`);
    }
  });
});

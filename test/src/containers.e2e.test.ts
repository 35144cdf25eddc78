/**
 * The images under test (deploy/README.md, "The images under test"): testcontainers over
 * podman's Docker API starts NATS, PostgreSQL and the six service images on one network, each
 * service from the chart's rendered Deployment (its settings, its Service name as the network
 * alias, its security context), runs the provision Job's commands once, and then renders through
 * the gateway container, delivers a signed webhook to a receiver beside the webhook container,
 * kills render under a job, and looks inside every running container.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { verifyWebhookSignature } from "@pressroom/client";
import { GRPC_PEERS, ensureGrpcCertificates } from "@pressroom/platform";
import { databaseCredentials, distinctFreePorts, REPO_ROOT } from "@pressroom/stack";
import { GenericContainer, Network, Wait, type StartedNetwork, type StartedTestContainer } from "testcontainers";
import { Api } from "./test-support/api";
import {
  DEPENDENCY_IMAGES,
  VERSION,
  buildImages,
  ensurePodmanSocket,
  grpcSecretDir,
  imageBudgets,
  imageSize,
  podContainer,
  podSpec,
  type PodSpec,
  podman,
  removeAll,
  renderedVolumeDir,
  runToCompletion,
} from "./test-support/containers";
import { component, ofKind, render, settingsSecret, type K8sObject } from "./test-support/helm";
import { busyRenderSlots } from "./test-support/hostile";
import { pdfInfo, pdfText, pdfXmp, pngSize } from "./test-support/pdf";
import { eventually } from "./test-support/webhook-receiver";

const SERVICES = ["identity", "storage", "metering", "render", "webhook", "gateway"] as const;
type Service = (typeof SERVICES)[number];
/** Dependencies of the build only: none may be in a runtime image. */
const BUILD_TOOLS = ["typescript", "tsx", "eslint", "@bufbuild/buf", "turbo", "ts-proto", "esbuild"];
/** A document whose render takes about 3 s: a script that busy-waits. */
const SLOW_HTML = "<h1>Slow</h1><script>const end = Date.now() + 3000; while (Date.now() < end) {}</script>";
/** Where the receiver's files are mounted, in the receiver and in the webhook container (its CA). */
const RECEIVER_DIR = "/etc/pressroom-test-receiver";

interface Callback {
  path: string;
  headers: Record<string, string>;
  rawBody: string;
}

describe("the images under test: NATS, PostgreSQL and the six services in containers on one network", { timeout: 50 * 60_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-containers-"));
  const prefix = `pressroom-ct-${randomBytes(3).toString("hex")}`;
  const running = new Map<string, StartedTestContainer>();
  const callbacks: Callback[] = [];
  const secretDirs: Record<string, string> = {};
  const receiverDir = path.join(dir, "receiver");
  let stopSocket: (() => Promise<void>) | undefined;
  let network: StartedNetwork;
  let objects: K8sObject[];
  let api: Api;
  let apiKey: string;
  /** The job under which render was killed, and its key (the free plan's one slot). */
  let killedJob: string;
  let freeKey: string;

  const serviceName = (service: string) => `pressroom-${service}`;
  const service = (name: Service) => running.get(name)!;
  const exec = async (container: StartedTestContainer, command: string[]) => {
    const result = await container.exec(command);
    return { code: result.exitCode, out: result.output };
  };

  /** A service's container from its Deployment, on the network under its Service's name; render's worker launches its own Chromium. */
  async function startService(name: Service, podName = `${prefix}-${name}`): Promise<StartedTestContainer> {
    const spec = podSpec(objects, "Deployment", serviceName(name));
    const container = podContainer(
      objects,
      spec,
      spec.containers.find((c) => c.name === name)!,
      {
        podName,
        secretDirs,
        unset: name === "render" ? ["RENDER_CHROMIUM_URL"] : [],
        binds: name === "webhook" ? [{ source: receiverDir, target: RECEIVER_DIR, mode: "ro" }] : [],
      },
    )
      .withNetwork(network)
      .withNetworkAliases(serviceName(name))
      .withExposedPorts(9090, ...(name === "gateway" ? [{ container: 8080, host: Number(new URL(api.baseUrl).port) }] : []))
      .withWaitStrategy(Wait.forHttp("/readyz", 9090).forStatusCode(200))
      .withStartupTimeout(180_000);
    const started = await container.start();
    running.set(name, started);
    if (name === "render") await startPostProcess(spec, podName, started);
    return started;
  }

  /** Render's pod's second container, post-processing, in the render container's network namespace as in the pod. */
  async function startPostProcess(spec: PodSpec, podName: string, render: StartedTestContainer): Promise<void> {
    const postprocess = await podContainer(
      objects,
      spec,
      spec.containers.find((c) => c.name === "postprocess")!,
      { podName: `${podName}-postprocess`, secretDirs },
    )
      .withNetworkMode(`container:${render.getId()}`)
      .withWaitStrategy(Wait.forLogMessage(/post-processing listening/))
      .withStartupTimeout(60_000)
      .start();
    running.set("render-postprocess", postprocess);
  }

  before(async () => {
    // images.sh first: on a fresh machine it installs podman.
    await buildImages();
    stopSocket = await ensurePodmanSocket();
    network = await new Network().start();
    const [httpPort] = await distinctFreePorts(1);
    api = new Api(`http://127.0.0.1:${httpPort}`);

    const certificates = await ensureGrpcCertificates(path.join(dir, "grpc-tls"));
    for (const peer of GRPC_PEERS) secretDirs[`${prefix}-grpc-${peer}`] = grpcSecretDir(path.join(dir, "grpc-secrets", peer), certificates[peer]);
    // The receiver's certificate (for 127.0.0.1, where the webhook service reaches it) and its script, readable by uid 10001.
    mkdirSync(receiverDir, { mode: 0o755 });
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        ...["-keyout", path.join(receiverDir, "key.pem"), "-out", path.join(receiverDir, "cert.pem")],
      ],
      { stdio: "ignore" },
    );
    copyFileSync(path.join(REPO_ROOT, "test", "containers", "receiver.mjs"), path.join(receiverDir, "receiver.mjs"));
    for (const file of ["key.pem", "cert.pem", "receiver.mjs"]) chmodSync(path.join(receiverDir, file), 0o644);

    const credentials = databaseCredentials("postgres://postgres@postgres:5432/postgres", () => randomBytes(16).toString("hex"));
    const values = {
      image: { tag: VERSION, pullPolicy: "Never" },
      grpcTls: { source: "secrets", secrets: Object.fromEntries(GRPC_PEERS.map((peer) => [peer, `${prefix}-grpc-${peer}`])) },
      publicBaseUrl: api.baseUrl,
      secrets: {
        databaseAdminUrl: credentials.adminUrl,
        databaseUrls: credentials.urls,
        outputSigningSecret: randomBytes(32).toString("hex"),
        webhookSecretEncryptionKey: randomBytes(32).toString("hex"),
      },
      billing: { provider: "local", local: { allowFreeUpgrades: true } },
      // The suite's nats-server is anonymous; the bundled NATS and PostgreSQL StatefulSets are the cluster's, not these containers'.
      nats: { enabled: false, url: "nats://nats:4222", auth: { enabled: false, insecureNoAuth: true } },
      postgresql: { enabled: false },
      render: { keda: { enabled: false } },
      // The gateway refuses a webhook_url the webhook service would refuse: both allow the receiver's loopback address.
      gateway: { env: { WEBHOOK_ALLOW_LOOPBACK: "true" } },
      webhook: { env: { WEBHOOK_ALLOW_LOOPBACK: "true", WEBHOOK_DEV_TARGET_PORT: "8443", WEBHOOK_EXTRA_CA_FILE: `${RECEIVER_DIR}/cert.pem` } },
    };
    const valuesFile = path.join(dir, "values.json");
    writeFileSync(valuesFile, JSON.stringify(values));
    objects = render({ valuesFiles: [valuesFile] });
    // The sealing keys as the chart made them: render's private key for its worker and the webhook service's for it, their certificates for the gateway.
    for (const pair of ["sealing", "destination-sealing"]) {
      const sealingKey = ofKind(objects, "Secret").find((o) => component(o) === pair)!;
      const sealingPublicKey = ofKind(objects, "ConfigMap").find((o) => component(o) === pair)!;
      secretDirs[sealingKey.metadata.name] = renderedVolumeDir(path.join(dir, `${pair}-key`), sealingKey, ["sealing.key"]);
      secretDirs[sealingPublicKey.metadata.name] = renderedVolumeDir(path.join(dir, `${pair}-public-key`), sealingPublicKey, ["sealing.crt"]);
    }

    const [nats, postgres] = await Promise.all([
      new GenericContainer(DEPENDENCY_IMAGES.nats)
        .withName(`${prefix}-nats`)
        .withNetwork(network)
        .withNetworkAliases("nats")
        .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
        .start(),
      new GenericContainer(DEPENDENCY_IMAGES.postgres)
        .withName(`${prefix}-postgres`)
        .withNetwork(network)
        .withNetworkAliases("postgres")
        .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/))
        .start(),
    ]);
    running.set("nats", nats);
    running.set("postgres", postgres);
  });

  after(async () => {
    await removeAll(running.values(), network);
    await stopSocket?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs the provision Job's commands once: every service's migrations, then the NATS provisioning, each exiting 0", async () => {
    const job = podSpec(objects, "Job", "pressroom-provision");
    for (const container of [...(job.initContainers ?? []), ...job.containers]) {
      await runToCompletion(podContainer(objects, job, container, { podName: `${prefix}-${container.name}`, secretDirs }).withNetwork(network));
    }
    const schemas = await exec(running.get("postgres")!, [
      "psql",
      "-h",
      "/tmp",
      "-U",
      "postgres",
      "-Atc",
      "select schema_name from information_schema.schemata",
    ]);
    for (const schema of ["identity", "metering", "render", "storage", "webhook"]) assert.ok(schemas.out.split("\n").includes(schema), `schema ${schema}`);
  });

  it("starts the six services from the chart's Deployments, each ready", async () => {
    await Promise.all(SERVICES.map((name) => startService(name)));
    const receiver = await new GenericContainer(`localhost/pressroom/webhook:${VERSION}`)
      .withName(`${prefix}-receiver`)
      .withNetworkMode(`container:${service("webhook").getId()}`)
      .withUser("10001:10001")
      .withBindMounts([{ source: receiverDir, target: RECEIVER_DIR, mode: "ro" }])
      .withCommand(["node", `${RECEIVER_DIR}/receiver.mjs`, RECEIVER_DIR])
      .withWaitStrategy(Wait.forLogMessage(/receiver listening/))
      .withLogConsumer((stream) => {
        let partial = "";
        stream.on("data", (chunk: Buffer | string) => {
          const lines = (partial + chunk.toString()).split("\n");
          partial = lines.pop()!;
          for (const line of lines) if (line.startsWith("{")) callbacks.push(JSON.parse(line) as Callback);
        });
      })
      .start();
    running.set("receiver", receiver);
    for (const name of SERVICES) assert.equal((await fetch(`http://${service(name).getHost()}:${service(name).getMappedPort(9090)}/readyz`)).status, 200, name);
  });

  it("a key made with the operator CLI in the admin pod's container", async () => {
    const spec = podSpec(objects, "Deployment", "pressroom-admin");
    const admin = await podContainer(objects, spec, spec.containers[0]!, { podName: `${prefix}-admin`, secretDirs })
      .withNetwork(network)
      .start();
    running.set("admin", admin);
    const created = await exec(admin, ["node", "/app/packages/admin/dist/cli.js", "keys", "create", "--email", "containers@example.com", "--plan", "business"]);
    assert.equal(created.code, 0, created.out);
    apiKey = created.out.split("\n").find((line) => line.startsWith("pr_"))!;
    assert.ok(apiKey, created.out);
  });

  // Before the other checks: they run while JetStream's ack_wait (45 s) passes before the killed job is redelivered.
  it("render's container killed (SIGKILL) under a job: the key's one slot stays the job's, and a new render container starts", async () => {
    const admin = running.get("admin")!;
    const created = await exec(admin, ["node", "/app/packages/admin/dist/cli.js", "keys", "create", "--email", "one-slot@example.com", "--plan", "free"]);
    freeKey = created.out.split("\n").find((line) => line.startsWith("pr_"))!;
    assert.ok(freeKey, created.out);
    const accepted = await api.post("/v1/render", { html: SLOW_HTML, data: {}, webhook_url: "https://127.0.0.1/killed" }, { key: freeKey });
    assert.equal(accepted.status, 202, accepted.text);
    killedJob = accepted.json.id as string;
    // Read on render's metrics, not through the API: the free plan allows 10 requests a minute.
    const renderContainer = service("render");
    await eventually("the render starts", async () => ((await busyRenderSlots(renderContainer.getMappedPort(9090))) > 0 ? true : undefined), 60_000, 100);
    await podman(["kill", "--signal", "KILL", `${prefix}-render`]);
    // Its post-processing container shares its network namespace, so it goes first: podman removes no container another depends on.
    await running.get("render-postprocess")!.stop();
    running.delete("render-postprocess");
    await renderContainer.stop();
    running.delete("render");
    // The one slot is the killed job's until it ends: another render is refused meanwhile.
    const refused = await api.post("/v1/render", { html: "<p>meanwhile</p>", data: {} }, { key: freeKey });
    assert.deepEqual([refused.status, refused.json.code], [429, "CONCURRENCY_EXCEEDED"], refused.text);

    await startService("render", `${prefix}-render-2`);
  });

  it("renders a PDF through the gateway container and downloads it by its signed URL", async () => {
    const response = await api.post("/v1/render", { html: "<h1>Hello {{name}}</h1>", data: { name: "Ada" } }, { key: apiKey });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.json.content_type, "application/pdf");
    const download = await api.download(response.json.url as string);
    assert.equal(download.status, 200);
    assert.ok(Number(pdfInfo(download.body).Pages) >= 1);
  });

  it("post-processes in the render image: two parts merged (qpdf), stamped (pdf-lib) and made PDF/A-2b (Ghostscript)", async () => {
    const body = {
      data: {},
      documents: [{ html: "<h1>Cover</h1>" }, { html: "<p>Terms</p>" }],
      options: { metadata: { title: "Bundle in a container" }, watermark: { text: "CONTAINERCOPY", angle: 0 }, pdfa: "PDF/A-2b" },
    };
    const response = await api.post("/v1/render", body, { key: apiKey });
    assert.equal(response.status, 200, response.text);
    const download = await api.download(response.json.url as string);
    const info = pdfInfo(download.body);
    assert.equal(info.Pages, "2");
    assert.equal(info.Title, "Bundle in a container");
    assert.match(pdfText(download.body), /CONTAINERCOPY/);
    assert.match(pdfXmp(download.body), /<pdfaid:part>2<\/pdfaid:part>/);
  });

  it("renders a PNG through the gateway container and downloads it by its signed URL", async () => {
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
    assert.equal(download.headers["content-type"], "image/png");
    assert.deepEqual(pngSize(download.body), { width: card.width * card.device_scale_factor, height: card.height * card.device_scale_factor });
  });

  it("delivers the webhook of an async render to the receiver beside the webhook container, signed with the key's secret", async () => {
    const secret = (await api.get("/v1/keys/webhook-secret", { key: apiKey })).json.secret as string;
    const accepted = await api.post("/v1/render", { html: "<p>later</p>", data: {}, webhook_url: "https://127.0.0.1/containers" }, { key: apiKey });
    assert.equal(accepted.status, 202, accepted.text);
    const callback = await eventually("the callback", async () => callbacks.find((c) => c.path === "/containers"), 60_000, 250);
    assert.equal(verifyWebhookSignature(callback.rawBody, callback.headers["x-service-signature"]!, secret), true);
    const body = JSON.parse(callback.rawBody) as { job_id: string; type: string };
    assert.deepEqual([body.job_id, body.type], [accepted.json.id, "job.succeeded"]);
  });

  it("inside every service container: uid 10001, a read-only root, no capabilities in any process, tini as PID 1, no build tool; the image within its budget", async () => {
    const budgets = imageBudgets();
    for (const name of SERVICES) {
      const container = service(name);
      assert.equal((await exec(container, ["id", "-u"])).out.trim(), "10001", `${name}: uid`);
      const root = await exec(container, ["sh", "-c", "awk '$2 == \"/\" { print $4 }' /proc/mounts"]);
      assert.match(root.out.trim(), /^ro(,|$)/, `${name}: the root filesystem is mounted ${root.out}`);
      assert.notEqual((await exec(container, ["touch", "/app/written"])).code, 0, `${name}: wrote to /app`);
      assert.equal((await exec(container, ["cat", "/proc/1/comm"])).out.trim(), "tini", `${name}: PID 1 is tini, which forwards signals`);
      const tools = await exec(container, ["sh", "-c", `cd /app/node_modules && ls -d ${BUILD_TOOLS.join(" ")} 2>/dev/null; command -v npm gcc cc make; true`]);
      assert.equal(tools.out.trim(), "", `${name}: build tools in the image`);
      const caps = (await exec(container, ["sh", "-c", "grep -h '^CapEff' /proc/[0-9]*/status"])).out.trim().split("\n");
      assert.ok(caps.length >= 2, `${name}: the processes' capabilities: ${caps.join(" ")}`);
      assert.deepEqual(
        caps.filter((line) => !/^CapEff:\s+0{16}$/.test(line)),
        [],
        `${name}: a process with capabilities`,
      );
      const size = await imageSize(`localhost/pressroom/${name}:${VERSION}`);
      assert.ok(budgets[name], `deploy/README.md records ${name}'s budget`);
      assert.ok(size <= budgets[name]!, `${name}: ${Math.round(size / 1e6)} MB over its budget of ${budgets[name]! / 1e6} MB`);
    }
  });

  it("no secret in Chromium's environment: /proc/<pid>/environ of every Chromium process in the render container", async () => {
    const renderContainer = service("render");
    const pids = (
      await exec(renderContainer, ["sh", "-c", 'for p in /proc/[0-9]*; do grep -qa chromium "$p/cmdline" 2>/dev/null && echo "${p#/proc/}"; done; true'])
    ).out
      .trim()
      .split("\n")
      .filter(Boolean);
    assert.ok(pids.length > 0, "Chromium runs in the render container");
    const secrets = Object.values((settingsSecret(objects)!.stringData ?? {}) as Record<string, string>);
    assert.ok(secrets.length >= 5);
    for (const pid of pids) {
      const environ = await exec(renderContainer, ["cat", `/proc/${pid}/environ`]);
      if (environ.code !== 0) continue; // a helper that exited meanwhile
      const names = environ.out.split("\0").map((entry) => entry.split("=")[0]);
      assert.deepEqual(
        names.filter((variable) => /DATABASE|NATS|GRPC_TLS|SECRET|_KEY$|PASSWORD/.test(variable ?? "")),
        [],
        `Chromium ${pid}'s environment names`,
      );
      for (const secret of secrets) assert.ok(!environ.out.includes(secret), `Chromium ${pid}'s environment holds a secret`);
    }
  });

  it("the killed job completes on the new render container: nothing lost, its output served, and the key's slot free again", async () => {
    const callback = await eventually("the killed job's callback", async () => callbacks.find((c) => c.path === "/killed"), 180_000, 500);
    const body = JSON.parse(callback.rawBody) as { job_id: string; type: string };
    assert.deepEqual([body.job_id, body.type], [killedJob, "job.succeeded"]);
    const view = (await api.get(`/v1/jobs/${killedJob}`, { key: freeKey })).json;
    assert.equal(view.status, "succeeded");
    assert.equal((await api.download(view.url as string)).status, 200);
    const after = await api.post("/v1/render", { html: "<p>after</p>", data: {} }, { key: freeKey });
    assert.equal(after.status, 200, after.text);
  });

  it("SIGTERM ends every service with exit code 0", async () => {
    for (const name of [...SERVICES].reverse()) {
      const container = service(name);
      await podman(["stop", "--time", "60", container.getId()], 90_000);
      assert.equal((await podman(["inspect", "--format", "{{.State.ExitCode}}", container.getId()])).trim(), "0", `${name} exit code`);
    }
  });
});

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readlinkSync, readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { descendantsOf, freePort, REPO_ROOT, waitFor } from "@pressroom/stack";
import { DEFAULT_CHROMIUM_PATH, RenderEngine } from "@pressroom/render/engine";
import { evaluation } from "./test-support/chart-renders";
import { CHART_DIR, type K8sObject } from "./test-support/helm";
import { IMAGE_BUILD_TIMEOUT_MS, podman, VERSION } from "./test-support/containers";
import { deploymentOf, type Container } from "./test-support/workloads";

/**
 * Chromium's own sandbox under the chart's seccomp profile (issue 39), measured in the render
 * image under podman (deploy/README.md, "Chromium's sandbox"): the chart's Chromium container,
 * with the profile installed on the nodes (render.chromiumSeccomp.localhostProfile), run with
 * its security context (its user, every capability dropped, no privilege escalation, read-only
 * root) and that profile, starts its browser sandboxed (the renderers in user namespaces of
 * their own, no --no-sandbox) and renders; the same container under the runtime's default
 * profile does not start (the control: the profile is what lets it).
 */

const IMAGE = `localhost/pressroom/render:${VERSION}`;
const PROFILE = path.join(CHART_DIR, "files", "chromium-seccomp.json");
const run = promisify(execFile);

/** The chart's Chromium container, with the profile installed on the nodes. */
function chartChromium(): { container: Container; objects: K8sObject[] } {
  const objects = evaluation({ set: ["render.chromiumSeccomp.localhostProfile=pressroom/chromium.json"] });
  const container = deploymentOf(objects, "render").spec.template.spec.containers.find((c) => c.name === "chromium")!;
  return { container, objects };
}

/** `podman run` options for that container's security context, its environment (the port given here) and its command. */
function runArgs(container: Container, name: string, port: number, seccomp: string): string[] {
  const security = container.securityContext!;
  assert.deepEqual(security.capabilities, { drop: ["ALL"] }, "the container adds no capability");
  assert.equal(security.seccompProfile?.type, "Localhost");
  const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? ""]));
  assert.equal(env.RENDER_CHROMIUM_SANDBOX, "true");
  return [
    "run",
    "--detach",
    "--name",
    name,
    "--network=host",
    `--user=${security.runAsUser}:${security.runAsGroup}`,
    "--cap-drop=ALL",
    ...(security.allowPrivilegeEscalation === false ? ["--security-opt=no-new-privileges"] : []),
    ...(security.readOnlyRootFilesystem ? ["--read-only"] : []),
    "--tmpfs=/tmp:rw,size=256m",
    "--tmpfs=/dev/shm:rw,size=256m",
    `--security-opt=seccomp=${seccomp}`,
    ...Object.entries({ ...env, RENDER_CHROMIUM_PORT: String(port), LOG_LEVEL: "info" }).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
    IMAGE,
    ...(container.args ?? []),
  ];
}

const ns = (pid: number, kind: string) => readlinkSync(`/proc/${pid}/ns/${kind}`);
/** A process's arguments; Chromium's zygote children rewrite their title over argv (one string, spaces between the words). */
const argsOf = (pid: number) => {
  const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  return args.length === 1 ? args[0]!.split(" ") : args;
};

describe("Chromium's own sandbox under the chart's seccomp profile, in the render image under podman (issue 39)", () => {
  const names: string[] = [];
  const { container } = chartChromium();

  before(async () => {
    const exists = await podman(["image", "exists", IMAGE]).then(
      () => true,
      () => false,
    );
    if (!exists) await run(path.join(REPO_ROOT, "deploy", "images.sh"), [VERSION], { timeout: IMAGE_BUILD_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 });
  });
  after(async () => {
    for (const name of names) await podman(["rm", "--force", "--time=0", name]).catch(() => undefined);
  });

  it("starts sandboxed under the pod's security context and the shipped profile, and renders", async () => {
    const port = await freePort();
    const name = `pressroom-chromium-seccomp-${process.pid}`;
    names.push(name);
    await podman(runArgs(container, name, port, PROFILE));
    const url = `http://127.0.0.1:${port}`;
    await waitFor(
      "Chromium's DevTools endpoint",
      () =>
        fetch(`${url}/json/version`).then(
          (r) => r.ok,
          () => false,
        ),
      60_000,
    );

    const engine = await RenderEngine.start({ executablePath: DEFAULT_CHROMIUM_PATH, slots: 1, connectUrl: url });
    try {
      const rendered = await engine.render({ html: "<h1>sandboxed</h1>", kind: "pdf" });
      assert.equal(Buffer.from(rendered.data).subarray(0, 5).toString("latin1"), "%PDF-");
      assert.equal(engine.stats().sandboxed, true, "the worker's metric says so");

      const root = Number((await podman(["inspect", "--format", "{{.State.Pid}}", name])).trim());
      const processes = [root, ...descendantsOf(root)].map((pid) => ({ pid, args: argsOf(pid) }));
      const chromium = processes.filter((p) => /chrom/.test(path.basename(p.args[0] ?? "")));
      const browserProcess = chromium.find((p) => !p.args.some((a) => a.startsWith("--type=")));
      assert.ok(browserProcess, "the browser process");
      assert.equal(browserProcess.args.includes("--no-sandbox"), false);
      const renderers = chromium.filter((p) => p.args.some((a) => a === "--type=renderer" || a.includes("--type=renderer")));
      assert.ok(renderers.length > 0, "a renderer");
      for (const renderer of renderers) {
        assert.notEqual(ns(renderer.pid, "user"), ns(browserProcess.pid, "user"), "the renderer runs in a user namespace of its own");
        assert.notEqual(ns(renderer.pid, "pid"), ns(browserProcess.pid, "pid"), "and a PID namespace of its own");
      }
    } finally {
      await engine.close();
    }
  });

  it("the control: the same container under the runtime's default seccomp profile does not start", async () => {
    const port = await freePort();
    const name = `pressroom-chromium-default-${process.pid}`;
    names.push(name);
    const defaultProfile = runArgs(container, name, port, PROFILE).filter((arg) => !arg.startsWith("--security-opt=seccomp="));
    await podman(defaultProfile);
    await waitFor("the container to exit", async () => (await podman(["inspect", "--format", "{{.State.Status}}", name])).trim() === "exited", 60_000);
    assert.equal((await podman(["inspect", "--format", "{{.State.ExitCode}}", name])).trim(), "70", "chromium-main exits: Chromium could not start");
  });
});

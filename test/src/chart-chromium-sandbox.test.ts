import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { evaluation, FREE_UPGRADES } from "./test-support/chart-renders";
import { CHART_DIR, helm, type K8sObject, NAMESPACE, ofKind, RELEASE } from "./test-support/helm";
import { deploymentOf, effectiveEnv } from "./test-support/workloads";

/**
 * Chromium's own sandbox, on by default where the cluster allows it (issue 39): the chart ships the
 * seccomp profile the sandbox needs (files/chromium-seccomp.json; test/src/chromium-seccomp.e2e.test.ts
 * runs Chromium under it), as a Security Profiles Operator SeccompProfile when the cluster serves that
 * API, or in a ConfigMap for the nodes' seccomp directory; render.chromiumSandbox (auto) is on when
 * either is in place, and the release's notes say which mode runs.
 */

const SPO = "security-profiles-operator.x-k8s.io/v1beta1/SeccompProfile";
const PROFILE = JSON.parse(readFileSync(path.join(CHART_DIR, "files", "chromium-seccomp.json"), "utf8")) as {
  defaultAction: string;
  syscalls: { names: string[]; action: string }[];
};
const NAME = `${RELEASE}-chromium-seccomp`;

function renderPod(objects: K8sObject[]) {
  const pod = deploymentOf(objects, "render").spec.template.spec;
  const worker = pod.containers.find((c) => c.name === "render")!;
  const chromium = pod.containers.find((c) => c.name === "chromium")!;
  return { worker, chromium, sandbox: [effectiveEnv(worker, objects).RENDER_CHROMIUM_SANDBOX, effectiveEnv(chromium, objects).RENDER_CHROMIUM_SANDBOX] };
}

function notes(...set: string[]): string {
  const result = helm([
    "install",
    RELEASE,
    CHART_DIR,
    "--dry-run=client",
    "--namespace",
    NAMESPACE,
    "--set",
    FREE_UPGRADES,
    ...set.flatMap((s) => ["--set", s]),
  ]);
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.split(/^NOTES:$/m)[1] ?? "";
}

describe("Chromium's sandbox and its seccomp profile (issue 39)", () => {
  it("the profile refuses by default and allows what the namespace sandbox needs, not the kernel's riskier doors", () => {
    assert.equal(PROFILE.defaultAction, "SCMP_ACT_ERRNO");
    const allowed = new Set(PROFILE.syscalls.filter((s) => s.action === "SCMP_ACT_ALLOW").flatMap((s) => s.names));
    for (const name of ["chroot", "unshare", "clone", "clone3", "read", "mmap", "futex", "epoll_wait"]) assert.ok(allowed.has(name), `${name} allowed`);
    for (const name of [
      "mount",
      "setns",
      "ptrace",
      "bpf",
      "keyctl",
      "perf_event_open",
      "userfaultfd",
      "io_uring_setup",
      "kexec_load",
      "init_module",
      "open_by_handle_at",
    ]) {
      assert.equal(allowed.has(name), false, `${name} refused`);
    }
  });

  it("with the Security Profiles Operator's API: a SeccompProfile of the chart's profile, Chromium under it with no capability, the sandbox on", () => {
    const objects = evaluation({ apiVersions: [SPO] });
    const [profile] = ofKind<K8sObject & { spec: unknown }>(objects, "SeccompProfile");
    assert.equal(profile?.metadata.name, NAME);
    assert.deepEqual(profile.spec, PROFILE);
    const { worker, chromium, sandbox } = renderPod(objects);
    assert.deepEqual(chromium.securityContext?.seccompProfile, { type: "Localhost", localhostProfile: `operator/${NAMESPACE}/${NAME}.json` });
    assert.deepEqual(chromium.securityContext?.capabilities, { drop: ["ALL"] });
    assert.equal(chromium.securityContext?.allowPrivilegeEscalation, false);
    assert.equal(chromium.securityContext?.readOnlyRootFilesystem, true);
    assert.deepEqual(sandbox, ["true", "true"]);
    assert.equal((worker.securityContext?.seccompProfile ?? { type: "RuntimeDefault" }).type, "RuntimeDefault", "the worker keeps the runtime's profile");
    assert.deepEqual(
      ofKind(objects, "ConfigMap").filter((c) => c.metadata.name === NAME),
      [],
    );
  });

  it("without it: the profile in a ConfigMap, and the sandbox off until it is on the nodes (then on, under it)", () => {
    const plain = evaluation();
    const configMap = ofKind<K8sObject & { data: Record<string, string> }>(plain, "ConfigMap").find((c) => c.metadata.name === NAME);
    assert.deepEqual(JSON.parse(configMap!.data["chromium.json"]!), PROFILE);
    assert.deepEqual(ofKind(plain, "SeccompProfile"), []);
    const off = renderPod(plain);
    assert.deepEqual(off.sandbox, ["false", "false"]);
    assert.equal(off.chromium.securityContext?.seccompProfile?.type, "RuntimeDefault");
    assert.deepEqual(off.chromium.securityContext?.capabilities, { drop: ["ALL"] });

    const installed = renderPod(evaluation({ set: ["render.chromiumSeccomp.localhostProfile=pressroom/chromium.json"] }));
    assert.deepEqual(installed.chromium.securityContext?.seccompProfile, { type: "Localhost", localhostProfile: "pressroom/chromium.json" });
    assert.deepEqual(installed.chromium.securityContext?.capabilities, { drop: ["ALL"] });
    assert.deepEqual(installed.sandbox, ["true", "true"]);
  });

  it("render.chromiumSandbox=false keeps it off even with a profile at hand", () => {
    const { chromium, sandbox } = renderPod(evaluation({ apiVersions: [SPO], set: ["render.chromiumSandbox=false"] }));
    assert.deepEqual(sandbox, ["false", "false"]);
    assert.equal(chromium.securityContext?.seccompProfile?.type, "RuntimeDefault");
  });

  it("the release's notes say which mode runs", () => {
    assert.match(notes(), new RegExp(`Chromium's own sandbox: OFF \\(--no-sandbox\\): no seccomp profile for it\\. Install the one in ConfigMap ${NAME}`));
    assert.match(
      notes("render.chromiumSeccomp.localhostProfile=pressroom/chromium.json"),
      /Chromium's own sandbox: ON, under the seccomp profile on the nodes at pressroom\/chromium\.json/,
    );
    assert.match(notes("render.chromiumSandbox=false"), /Chromium's own sandbox: OFF \(--no-sandbox\): render\.chromiumSandbox=false\./);
    assert.match(notes("render.chromiumSandbox=true"), /Chromium's own sandbox: ON, with SYS_CHROOT/);
    assert.match(notes(), /pressroom_render_chromium_sandboxed/);
  });
});

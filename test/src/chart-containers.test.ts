import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { everyRender, evaluation, FREE_UPGRADES, pressroomImage } from "./test-support/chart-renders";
import { component, type K8sObject, ofKind, renderError } from "./test-support/helm";
import { allContainers, type Container, deploymentOf, effectiveEnv, HEALTH_PORT, UID, type Workload, workloads } from "./test-support/workloads";

/** Every container of the chart locked down, and Chromium in a container of its own (issue 30). */

describe("containers are locked down", () => {
  const each = (check: (c: Container, pod: Workload["spec"]["template"]["spec"], where: string) => string | undefined): string[] =>
    everyRender().flatMap(([name, objects]) =>
      allContainers(objects).flatMap(({ where, workload, container }) => {
        const problem = check(container, workload.spec.template.spec, where);
        return problem ? [`${name}: ${where}: ${problem}`] : [];
      }),
    );

  it("every container runs as non-root, ours as uid 10001 but Chromium's and post-processing's", () => {
    assert.deepEqual(
      each((c, pod) => {
        const nonRoot = c.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
        const uid = c.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
        if (nonRoot !== true) return "runAsNonRoot is not true";
        if (uid === 0) return "runAsUser 0";
        if (pressroomImage(c) && c.name !== "chromium" && c.name !== "postprocess" && uid !== UID) return `runAsUser ${uid}, not ${UID}`;
        return undefined;
      }),
      [],
    );
  });

  it("every container has a read-only root filesystem", () => {
    assert.deepEqual(
      each((c) => (c.securityContext?.readOnlyRootFilesystem === true ? undefined : "readOnlyRootFilesystem is not true")),
      [],
    );
  });

  it("no container may escalate privileges or run privileged", () => {
    assert.deepEqual(
      each((c) =>
        c.securityContext?.allowPrivilegeEscalation !== false
          ? "allowPrivilegeEscalation is not false"
          : c.securityContext?.privileged
            ? "privileged"
            : undefined,
      ),
      [],
    );
  });

  it("every container drops ALL capabilities and adds none", () => {
    assert.deepEqual(
      each((c) =>
        !(c.securityContext?.capabilities?.drop ?? []).includes("ALL")
          ? "capabilities.drop lacks ALL"
          : (c.securityContext?.capabilities?.add ?? []).length > 0
            ? `adds ${c.securityContext!.capabilities!.add!.join(",")}`
            : undefined,
      ),
      [],
    );
  });

  it("every container runs under the RuntimeDefault seccomp profile", () => {
    assert.deepEqual(
      each((c, pod) =>
        (c.securityContext?.seccompProfile ?? pod.securityContext?.seccompProfile)?.type === "RuntimeDefault"
          ? undefined
          : "seccompProfile is not RuntimeDefault",
      ),
      [],
    );
  });

  it("every container sets cpu and memory requests and a memory limit", () => {
    assert.deepEqual(
      each((c) => {
        const missing = [
          c.resources?.requests?.cpu === undefined && "requests.cpu",
          c.resources?.requests?.memory === undefined && "requests.memory",
          c.resources?.limits?.memory === undefined && "limits.memory",
        ].filter(Boolean);
        return missing.length > 0 ? `no ${missing.join(", ")}` : undefined;
      }),
      [],
    );
  });

  it("no pod mounts a service account token", () => {
    const problems = everyRender().flatMap(([name, objects]) =>
      workloads(objects).flatMap((w) => {
        const pod = w.spec.template.spec;
        const account = objects.find((o) => o.kind === "ServiceAccount" && o.metadata.name === (pod.serviceAccountName ?? "default")) as
          (K8sObject & { automountServiceAccountToken?: boolean }) | undefined;
        const mounts = pod.automountServiceAccountToken ?? account?.automountServiceAccountToken ?? true;
        return mounts === false ? [] : [`${name}: ${w.kind}/${w.metadata.name} mounts its service account token`];
      }),
    );
    assert.deepEqual(problems, []);
  });
});

describe("a compromised renderer reaches no credential: Chromium in a container of its own (issue 30)", () => {
  const renderPod = (objects: K8sObject[]) => {
    const pod = deploymentOf(objects, "render").spec.template.spec;
    const worker = pod.containers.find((c) => c.name === "render");
    const chromium = pod.containers.find((c) => c.name === "chromium");
    assert.ok(worker && chromium, `render's containers: ${pod.containers.map((c) => c.name).join(", ")}`);
    return { pod, worker, chromium };
  };
  const eachRender = (check: (objects: K8sObject[], parts: ReturnType<typeof renderPod>) => string[]): string[] =>
    everyRender().flatMap(([name, objects]) => check(objects, renderPod(objects)).map((problem) => `${name}: ${problem}`));

  it("runs the render image's Chromium host, beside the worker, in every render", () => {
    assert.deepEqual(
      eachRender((_, { worker, chromium }) => [
        ...(chromium.image === worker.image ? [] : [`image ${chromium.image}, not the worker's ${worker.image}`]),
        ...(/dist\/chromium-main\.js/.test([...(chromium.command ?? []), ...(chromium.args ?? [])].join(" ")) ? [] : ["does not run dist/chromium-main.js"]),
      ]),
      [],
    );
  });

  it("references no Secret: no secret env, no envFrom, only emptyDir volumes, none shared with the worker", () => {
    assert.deepEqual(
      eachRender((_, { pod, worker, chromium }) => {
        const volume = (name: string) => (pod.volumes ?? []).find((v) => v.name === name);
        const workerVolumes = new Set((worker.volumeMounts ?? []).map((m) => m.name));
        return [
          ...(chromium.envFrom ? ["has envFrom"] : []),
          ...(chromium.env ?? []).filter((e) => e.valueFrom).map((e) => `${e.name} comes from ${JSON.stringify(e.valueFrom)}`),
          ...(chromium.volumeMounts ?? []).flatMap((m) => [
            ...(volume(m.name)?.emptyDir ? [] : [`mounts ${m.name}, which is not an emptyDir`]),
            ...(workerVolumes.has(m.name) ? [`shares ${m.name} with the worker`] : []),
          ]),
        ];
      }),
      [],
    );
  });

  it("runs as a user and group of its own, not the worker's, non-root", () => {
    assert.deepEqual(
      eachRender((_, { pod, worker, chromium }) => {
        const uid = (c: Container) => c.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
        const gid = (c: Container) => c.securityContext?.runAsGroup ?? pod.securityContext?.runAsGroup;
        return [
          ...(uid(chromium) === undefined || uid(chromium) === 0 || uid(chromium) === uid(worker)
            ? [`uid ${uid(chromium)} (the worker's: ${uid(worker)})`]
            : []),
          ...(gid(chromium) === undefined || gid(chromium) === 0 || gid(chromium) === gid(worker)
            ? [`gid ${gid(chromium)} (the worker's: ${gid(worker)})`]
            : []),
        ];
      }),
      [],
    );
  });

  it("has a read-only root, no capabilities, no privilege escalation; the pod mounts no token and shares no process namespace", () => {
    assert.deepEqual(
      eachRender((_, { pod, chromium }) => {
        const sc = chromium.securityContext ?? {};
        return [
          ...(sc.readOnlyRootFilesystem === true ? [] : ["root filesystem is writable"]),
          ...(sc.allowPrivilegeEscalation === false ? [] : ["may escalate privileges"]),
          ...((sc.capabilities?.drop ?? []).includes("ALL") && (sc.capabilities?.add ?? []).length === 0 ? [] : ["keeps or adds capabilities"]),
          ...(pod.automountServiceAccountToken === false ? [] : ["the pod mounts a service-account token"]),
          ...(pod.shareProcessNamespace || pod.hostPID || pod.hostIPC ? ["the pod shares a process or IPC namespace"] : []),
          ...((chromium.volumeMounts ?? []).some((m) => m.mountPath === "/tmp") ? [] : ["no /tmp of its own"]),
        ];
      }),
      [],
    );
  });

  it("listens on the pod's loopback only, where the worker connects; nothing outside the pod is offered its port", () => {
    assert.deepEqual(
      eachRender((objects, { worker, chromium }) => {
        const url = effectiveEnv(worker, objects).RENDER_CHROMIUM_URL ?? "";
        const port = effectiveEnv(chromium, objects).RENDER_CHROMIUM_PORT;
        const services = ofKind<K8sObject & { spec: { ports: { port: number; targetPort?: number | string }[] } }>(objects, "Service").filter(
          (s) => component(s) === "render",
        );
        return [
          ...(port !== undefined && url === `http://127.0.0.1:${port}` ? [] : [`the worker connects to ${url}, Chromium listens on ${port}`]),
          ...((chromium.ports ?? []).length > 0 ? [`declares container ports ${JSON.stringify(chromium.ports)}`] : []),
          ...services.flatMap((s) => s.spec.ports.filter((p) => String(p.targetPort ?? p.port) === port).map(() => `${s.metadata.name} targets it`)),
          ...(chromium.livenessProbe?.exec?.command.join(" ").includes(`127.0.0.1:${port}`) ? [] : ["no liveness probe of its endpoint"]),
        ];
      }),
      [],
    );
  });

  it("outlives the worker's drain: its preStop waits until the worker's health port stops answering", () => {
    assert.deepEqual(
      eachRender((_, { chromium }) => {
        const preStop =
          (chromium as Container & { lifecycle?: { preStop?: { exec?: { command: string[] } } } }).lifecycle?.preStop?.exec?.command.join(" ") ?? "";
        return preStop.includes(`127.0.0.1:${HEALTH_PORT}/livez`) ? [] : [`preStop: ${preStop || "none"}`];
      }),
      [],
    );
  });

  it("with Chromium's own sandbox on, SYS_CHROOT goes to the Chromium container, never to the worker", () => {
    const { worker, chromium } = renderPod(evaluation({ set: ["render.chromiumSandbox=true"] }));
    assert.deepEqual(chromium.securityContext?.capabilities?.add, ["SYS_CHROOT"]);
    assert.equal(worker.securityContext?.capabilities?.add, undefined);
  });

  it("refuses Chromium the worker's uid", () => {
    assert.match(renderError({ set: [FREE_UPGRADES, `render.chromium.uid=${UID}`] }), /chromium.*uid|uid.*10001|schema/i);
  });
});

describe("no credential where customers' PDFs are parsed: post-processing in a container of its own (issue 39)", () => {
  const renderPod = (objects: K8sObject[]) => {
    const pod = deploymentOf(objects, "render").spec.template.spec;
    const worker = pod.containers.find((c) => c.name === "render");
    const chromium = pod.containers.find((c) => c.name === "chromium");
    const postprocess = pod.containers.find((c) => c.name === "postprocess");
    assert.ok(worker && chromium && postprocess, `render's containers: ${pod.containers.map((c) => c.name).join(", ")}`);
    return { pod, worker, chromium, postprocess };
  };
  const eachRender = (check: (objects: K8sObject[], parts: ReturnType<typeof renderPod>) => string[]): string[] =>
    everyRender().flatMap(([name, objects]) => check(objects, renderPod(objects)).map((problem) => `${name}: ${problem}`));

  it("runs the render image's dist/postprocess-main.js beside the worker, which reaches it on the pod's loopback only", () => {
    assert.deepEqual(
      eachRender((objects, { worker, postprocess }) => {
        const port = effectiveEnv(postprocess, objects).RENDER_POSTPROCESS_PORT;
        const url = effectiveEnv(worker, objects).RENDER_POSTPROCESS_URL;
        const services = ofKind<K8sObject & { spec: { ports: { port: number; targetPort?: number | string }[] } }>(objects, "Service").filter(
          (s) => component(s) === "render",
        );
        return [
          ...(postprocess.image === worker.image ? [] : [`image ${postprocess.image}, not the worker's ${worker.image}`]),
          ...(/dist\/postprocess-main\.js/.test([...(postprocess.command ?? []), ...(postprocess.args ?? [])].join(" "))
            ? []
            : ["does not run dist/postprocess-main.js"]),
          ...(port !== undefined && url === `http://127.0.0.1:${port}` ? [] : [`the worker sends to ${url}, post-processing listens on ${port}`]),
          ...((postprocess.ports ?? []).length > 0 ? [`declares container ports ${JSON.stringify(postprocess.ports)}`] : []),
          ...services.flatMap((s) => s.spec.ports.filter((p) => String(p.targetPort ?? p.port) === port).map(() => `${s.metadata.name} targets it`)),
          ...(postprocess.livenessProbe?.exec?.command.join(" ").includes(`127.0.0.1:${port}`) ? [] : ["no liveness probe of its endpoint"]),
        ];
      }),
      [],
    );
  });

  it("references no Secret and mounts no token: no secret env, no envFrom, only its own emptyDir /tmp, none shared", () => {
    assert.deepEqual(
      eachRender((_, { pod, worker, chromium, postprocess }) => {
        const volume = (name: string) => (pod.volumes ?? []).find((v) => v.name === name);
        const others = new Set([...(worker.volumeMounts ?? []), ...(chromium.volumeMounts ?? [])].map((m) => m.name));
        return [
          ...(postprocess.envFrom ? ["has envFrom"] : []),
          ...(postprocess.env ?? []).filter((e) => e.valueFrom).map((e) => `${e.name} comes from ${JSON.stringify(e.valueFrom)}`),
          ...(postprocess.volumeMounts ?? []).flatMap((m) => [
            ...(volume(m.name)?.emptyDir ? [] : [`mounts ${m.name}, which is not an emptyDir`]),
            ...(others.has(m.name) ? [`shares ${m.name} with another container`] : []),
          ]),
          ...(pod.automountServiceAccountToken === false ? [] : ["the pod mounts a service-account token"]),
          ...(pod.shareProcessNamespace || pod.hostPID || pod.hostIPC ? ["the pod shares a process or IPC namespace"] : []),
        ];
      }),
      [],
    );
  });

  it("runs as a user and group of its own (not the worker's, not Chromium's), non-root, read-only, with no capabilities", () => {
    assert.deepEqual(
      eachRender((_, { pod, worker, chromium, postprocess }) => {
        const uid = (c: Container) => c.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
        const gid = (c: Container) => c.securityContext?.runAsGroup ?? pod.securityContext?.runAsGroup;
        const sc = postprocess.securityContext ?? {};
        return [
          ...([undefined, 0, uid(worker), uid(chromium)].includes(uid(postprocess)) ? [`uid ${uid(postprocess)}`] : []),
          ...([undefined, 0, gid(worker), gid(chromium)].includes(gid(postprocess)) ? [`gid ${gid(postprocess)}`] : []),
          ...(sc.readOnlyRootFilesystem === true ? [] : ["root filesystem is writable"]),
          ...(sc.allowPrivilegeEscalation === false ? [] : ["may escalate privileges"]),
          ...((sc.capabilities?.drop ?? []).includes("ALL") && (sc.capabilities?.add ?? []).length === 0 ? [] : ["keeps or adds capabilities"]),
        ];
      }),
      [],
    );
  });

  it("bounds its scratch: its /tmp is an emptyDir with a sizeLimit (issue 39, item 4)", () => {
    assert.deepEqual(
      eachRender((_, { pod, postprocess }) => {
        const tmp = (postprocess.volumeMounts ?? []).find((m) => m.mountPath === "/tmp");
        const volume = (pod.volumes ?? []).find((v) => v.name === tmp?.name) as { emptyDir?: { sizeLimit?: string } } | undefined;
        return volume?.emptyDir?.sizeLimit ? [] : [`post-processing's /tmp (${tmp?.name ?? "none"}) has no sizeLimit`];
      }),
      [],
    );
  });

  it("outlives the worker's drain: its preStop waits until the worker's health port stops answering", () => {
    assert.deepEqual(
      eachRender((_, { postprocess }) => {
        const preStop =
          (postprocess as Container & { lifecycle?: { preStop?: { exec?: { command: string[] } } } }).lifecycle?.preStop?.exec?.command.join(" ") ?? "";
        return preStop.includes(`127.0.0.1:${HEALTH_PORT}/livez`) ? [] : [`preStop: ${preStop || "none"}`];
      }),
      [],
    );
  });

  it("refuses post-processing the worker's uid", () => {
    assert.match(renderError({ set: [FREE_UPGRADES, `render.postprocess.uid=${UID}`] }), /postprocess.*uid|uid.*10001|schema/i);
  });
});

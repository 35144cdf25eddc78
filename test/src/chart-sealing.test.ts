import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seal, sealingPrivateKey, sealingPublicKey, unseal } from "@pressroom/platform";
import { rendered } from "./test-support/chart-renders";
import { type K8sObject, ofKind } from "./test-support/helm";
import { allContainers, deploymentOf, effectiveEnv, type Workload } from "./test-support/workloads";

/**
 * Render's sealing key pair (issue 39 item 8): the gateway seals the jobs' secrets to its public
 * key, and only render's worker container holds the private key that opens them.
 */

type Data = K8sObject & { data?: Record<string, string>; stringData?: Record<string, string> };
const SEALING_DIR = "/etc/pressroom/sealing";

const byName = (objects: K8sObject[], kind: string, suffix: string): Data => {
  const found = ofKind<Data>(objects, kind).filter((o) => o.metadata.name.endsWith(suffix));
  assert.equal(found.length, 1, `one ${kind} named *${suffix}`);
  return found[0]!;
};

/** The containers that mount a volume of `source` (a Secret's or a ConfigMap's name), with where. */
function mountersOf(objects: K8sObject[], source: string): string[] {
  return allContainers(objects)
    .filter(({ workload, container }) => {
      const volumes = (workload as Workload).spec.template.spec.volumes ?? [];
      const names = volumes.filter((v) => v.secret?.secretName === source || v.configMap?.name === source).map((v) => v.name);
      return (container.volumeMounts ?? []).some((mount) => names.includes(mount.name));
    })
    .map(({ where }) => where);
}

describe("render's sealing key in the chart", () => {
  for (const name of ["evaluation", "production", "everything on"] as const) {
    it(`${name}: only render's worker container mounts the private key, the gateway its certificate only, and they are a pair`, () => {
      const objects = rendered(name);
      const secret = byName(objects, "Secret", "-sealing-key");
      const publicKey = byName(objects, "ConfigMap", "-sealing-public-key");
      const key = secret.stringData!["sealing.key"]!;
      const certificate = publicKey.data!["sealing.crt"]!;
      assert.match(key, /BEGIN EC PRIVATE KEY/);
      assert.deepEqual(Object.keys(publicKey.data!), ["sealing.crt"]);
      assert.match(certificate, /BEGIN CERTIFICATE/);
      assert.equal(unseal(sealingPrivateKey(key), seal(sealingPublicKey(certificate), "owner-pw", "p"), "p"), "owner-pw");

      const render = deploymentOf(objects, "render");
      assert.deepEqual(mountersOf(objects, secret.metadata.name), [`Deployment/${render.metadata.name} container render`]);
      const volume = render.spec.template.spec.volumes!.find((v) => v.secret?.secretName === secret.metadata.name) as { secret: { items?: { key: string }[] } };
      assert.deepEqual(
        volume.secret.items?.map((item) => item.key),
        ["sealing.key"],
        "render mounts the private key alone",
      );
      const gateway = deploymentOf(objects, "gateway");
      assert.deepEqual(mountersOf(objects, publicKey.metadata.name), [`Deployment/${gateway.metadata.name} container gateway`]);

      const leaks = objects.filter((o) => o !== secret && JSON.stringify(o).includes(key.trim().split("\n")[1]!));
      assert.deepEqual(
        leaks.map((o) => `${o.kind}/${o.metadata.name}`),
        [],
        "the private key is in its Secret only",
      );
      assert.equal(effectiveEnv(render.spec.template.spec.containers[0]!, objects).SEALING_KEY, `${SEALING_DIR}/sealing.key`);
      const gatewayEnv = effectiveEnv(gateway.spec.template.spec.containers[0]!, objects);
      assert.equal(gatewayEnv.SEALING_PUBLIC_KEY, `${SEALING_DIR}/sealing.crt`);
      assert.equal(gatewayEnv.SEALING_KEY, undefined);
    });
  }
});

import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { seal, sealingPrivateKey, sealingPublicKey, unseal } from "@pressroom/platform";
import { FREE_UPGRADES, rendered } from "./test-support/chart-renders";
import { component, type K8sObject, ofKind, render, renderError } from "./test-support/helm";
import { allContainers, deploymentOf, effectiveEnv, SERVICES, type Workload } from "./test-support/workloads";

/**
 * The two sealing key pairs (issue 39 item 8, issue 42): the gateway seals the jobs' secrets to
 * render's public key and their destinations to the webhook service's, and each private key is
 * held by the one container that opens what is sealed to it: render's worker, the webhook service.
 */

type Data = K8sObject & { data?: Record<string, string>; stringData?: Record<string, string> };

/** Each pair: its name (the objects' component label, its directory), the container holding its private key and the settings naming its files. */
const PAIRS = [
  { pair: "sealing", holder: "render", keyEnv: "SEALING_KEY", publicKeyEnv: "SEALING_PUBLIC_KEY" },
  { pair: "destination-sealing", holder: "webhook", keyEnv: "DESTINATION_SEALING_KEY", publicKeyEnv: "DESTINATION_SEALING_PUBLIC_KEY" },
] as const;

const ofPair = (objects: K8sObject[], kind: string, pair: string): Data => {
  const found = ofKind<Data>(objects, kind).filter((o) => component(o) === pair);
  assert.equal(found.length, 1, `one ${kind} of the ${pair} pair`);
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

const keysOf = (objects: K8sObject[], pair: string) => ({
  key: ofPair(objects, "Secret", pair).stringData!["sealing.key"]!,
  certificate: ofPair(objects, "ConfigMap", pair).data!["sealing.crt"]!,
});

describe("the sealing keys in the chart", () => {
  for (const name of ["evaluation", "production", "everything on"] as const) {
    for (const { pair, holder, keyEnv, publicKeyEnv } of PAIRS) {
      it(`${name}: ${pair}: only ${holder}'s container mounts the private key, the gateway its certificate only, and they are a pair`, () => {
        const objects = rendered(name);
        const secret = ofPair(objects, "Secret", pair);
        const publicKey = ofPair(objects, "ConfigMap", pair);
        const { key, certificate } = keysOf(objects, pair);
        assert.match(key, /BEGIN EC PRIVATE KEY/);
        assert.deepEqual(Object.keys(publicKey.data!), ["sealing.crt"]);
        assert.match(certificate, /BEGIN CERTIFICATE/);
        assert.equal(unseal(sealingPrivateKey(key), seal(sealingPublicKey(certificate), "owner-pw", "p"), "p"), "owner-pw");

        const deployment = deploymentOf(objects, holder);
        assert.deepEqual(mountersOf(objects, secret.metadata.name), [`Deployment/${deployment.metadata.name} container ${holder}`]);
        const volume = deployment.spec.template.spec.volumes!.find((v) => v.secret?.secretName === secret.metadata.name) as {
          secret: { items?: { key: string }[] };
        };
        assert.deepEqual(
          volume.secret.items?.map((item) => item.key),
          ["sealing.key"],
          `${holder} mounts the private key alone`,
        );
        const gateway = deploymentOf(objects, "gateway");
        assert.deepEqual(mountersOf(objects, publicKey.metadata.name), [`Deployment/${gateway.metadata.name} container gateway`]);

        const leaks = objects.filter((o) => o !== secret && JSON.stringify(o).includes(key.trim().split("\n")[1]!));
        assert.deepEqual(
          leaks.map((o) => `${o.kind}/${o.metadata.name}`),
          [],
          "the private key is in its Secret only",
        );
        const dir = `/etc/pressroom/${pair}`;
        for (const service of SERVICES) {
          const env = effectiveEnv(deploymentOf(objects, service).spec.template.spec.containers[0]!, objects);
          assert.equal(env[keyEnv], service === holder ? `${dir}/sealing.key` : undefined, `${service}: ${keyEnv}`);
          assert.equal(env[publicKeyEnv], service === "gateway" ? `${dir}/sealing.crt` : undefined, `${service}: ${publicKeyEnv}`);
        }
      });
    }

    it(`${name}: the two pairs are apart: neither private key opens what is sealed to the other's public key`, () => {
      const objects = rendered(name);
      const render = keysOf(objects, "sealing");
      const webhook = keysOf(objects, "destination-sealing");
      assert.notEqual(render.key, webhook.key);
      assert.throws(() => unseal(sealingPrivateKey(render.key), seal(sealingPublicKey(webhook.certificate), "https://signed?sig=x", "p"), "p"));
      assert.throws(() => unseal(sealingPrivateKey(webhook.key), seal(sealingPublicKey(render.certificate), "owner-pw", "p"), "p"));
      const renderPod = deploymentOf(objects, "render").spec.template.spec;
      const names = [ofPair(objects, "Secret", "destination-sealing").metadata.name, ofPair(objects, "ConfigMap", "destination-sealing").metadata.name];
      assert.deepEqual(
        (renderPod.volumes ?? []).filter((v) => names.includes(v.secret?.secretName ?? v.configMap?.name ?? "")),
        [],
        "render's pod has no volume of the webhook's pair",
      );
    });
  }
});

describe("a sealing pair of the operator's own (sealing.<holder>.existingSecret), for renders made without the cluster", () => {
  const pair = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const publicKey = pair.publicKey.export({ format: "pem", type: "spki" }).toString();
  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-sealing-values-"));
  const values = path.join(dir, "values.yaml");
  writeFileSync(values, JSON.stringify({ sealing: { webhook: { existingSecret: "my-destination-key", publicKey } } }));

  after(() => rmSync(dir, { recursive: true, force: true }));

  it("is mounted into its holder alone and its public key given to the gateway as it is; the chart makes no key of that pair", () => {
    const objects = render({ valuesFiles: [values], set: [FREE_UPGRADES] });
    assert.deepEqual(
      ofKind(objects, "Secret").filter((o) => component(o) === "destination-sealing"),
      [],
      "no Secret of the pair is made",
    );
    assert.deepEqual(mountersOf(objects, "my-destination-key"), [`Deployment/${deploymentOf(objects, "webhook").metadata.name} container webhook`]);
    const given = ofPair(objects, "ConfigMap", "destination-sealing").data!["sealing.crt"]!;
    assert.equal(given, publicKey);
    assert.equal(unseal(pair.privateKey, seal(sealingPublicKey(given), "https://signed?sig=x", "p"), "p"), "https://signed?sig=x");
    assert.match(ofPair(objects, "Secret", "sealing").stringData!["sealing.key"]!, /BEGIN EC PRIVATE KEY/, "render's pair is still the chart's");
  });

  it("is refused without its public key, and a public key without its Secret, naming the value", () => {
    assert.match(
      renderError({ set: [FREE_UPGRADES, "sealing.render.existingSecret=mine"] }),
      /sealing\.render\.publicKey is required with sealing\.render\.existingSecret/,
    );
    assert.match(
      renderError({ set: [FREE_UPGRADES, "sealing.webhook.publicKey=x"] }),
      /sealing\.webhook\.publicKey is given without sealing\.webhook\.existingSecret/,
    );
  });
});

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ciValues, everyRender } from "./test-support/chart-renders";
import { type K8sObject, parseManifests, render } from "./test-support/helm";
import { validateObject } from "./test-support/kube-schemas";
import { claimedVersions, kubernetesProblem, type KubernetesVersion, SCHEMA_PACKAGES } from "./test-support/kube-versions";

/**
 * `helm install --dry-run` against a real API server is out of reach here, so every rendered
 * object is checked as kubeconform would, against the schemas of the oldest and the newest
 * Kubernetes version the chart claims (issue 45), and its custom resources against their CRDs'.
 */

const VERSIONS = Object.keys(SCHEMA_PACKAGES) as KubernetesVersion[];

/** Every render of the policy tests, and each ci/ value file's. */
const allRenders = (): [string, K8sObject[]][] => [...everyRender(), ...ciValues.map((file): [string, K8sObject[]] => [file, render({ valuesFiles: [file] })])];

describe("every rendered object is valid for the Kubernetes versions the chart claims (issue 45)", () => {
  it("Chart.yaml's kubeVersion starts at the oldest version tested, and its annotation names the versions tested here", () => {
    const { kubeVersion, tested } = claimedVersions();
    assert.deepEqual(tested, VERSIONS, "the versions with schemas here are the ones Chart.yaml names");
    assert.equal(kubeVersion, `>=${tested[0]}.0-0`);
  });

  for (const version of VERSIONS) {
    it(`validates every render against Kubernetes ${version}'s schemas, and the KEDA, cert-manager and Prometheus operator CRDs'`, () => {
      const failures = allRenders().flatMap(([name, objects]) =>
        objects.flatMap((object) => {
          try {
            validateObject(object, version);
            return [];
          } catch (error) {
            return [`${name}: ${(error as Error).message}`];
          }
        }),
      );
      assert.deepEqual(failures, []);
    });
  }

  const [pod] = parseManifests(`
apiVersion: v1
kind: Pod
metadata: { name: probe }
spec:
  containers:
    - name: app
      image: app:1
      lifecycle: { preStop: { sleep: { seconds: 5 } } }
`);

  it("the oldest version's check is strict: a field added later (preStop sleep, 1.29) fails 1.25 and passes 1.33", () => {
    assert.match(kubernetesProblem(pod!, "1.25") ?? "", /must NOT have additional properties/);
    assert.equal(kubernetesProblem(pod!, "1.33"), undefined);
  });

  it("a wrong type fails, and so does an API version the version no longer serves", () => {
    const wrong = { ...pod!, spec: { containers: [{ name: "app", image: "app:1", ports: [{ containerPort: "http" }] }] } };
    for (const version of VERSIONS) assert.match(kubernetesProblem(wrong, version) ?? "", /integer/, version);
    const removed = { apiVersion: "policy/v1beta1", kind: "PodDisruptionBudget", metadata: { name: "gone-by-1.25" } };
    for (const version of VERSIONS) assert.match(kubernetesProblem(removed, version) ?? "", /not served/, version);
    // Served by 1.25, removed in 1.26: only the newest version's schemas catch it.
    const hpa = {
      apiVersion: "autoscaling/v2beta2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "gone-by-1.26" },
      spec: { maxReplicas: 2, scaleTargetRef: { kind: "Deployment", name: "app" } },
    };
    assert.equal(kubernetesProblem(hpa, "1.25"), undefined);
    assert.equal(kubernetesProblem(hpa, "1.33"), "autoscaling/v2beta2 is not served by Kubernetes 1.33");
  });
});

import * as certManager from "@kubernetes-models/cert-manager/cert-manager.io/v1";
import * as keda from "@kubernetes-models/keda/keda.sh/v1alpha1";
import * as monitoring from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import type { K8sObject } from "./helm";
import { kubernetesProblem, type KubernetesVersion } from "./kube-versions";

type Model = new (data: unknown) => { validate(): void };

/** The custom resources a Pressroom chart may render (KEDA, cert-manager, the Prometheus operator), with their schema models. */
const CUSTOM_RESOURCES: Record<string, Record<string, unknown>> = {
  "keda.sh/v1alpha1": keda,
  "cert-manager.io/v1": certManager,
  "monitoring.coreos.com/v1": monitoring,
};

/**
 * Validates one object: a built-in kind against the schemas of the Kubernetes version given
 * (kube-versions.ts), a custom resource against its CRD's schema; throws naming the object and
 * the first violation. A kind with no schema fails: it cannot be proven.
 */
export function validateObject(object: K8sObject, version: KubernetesVersion): void {
  const where = `${object.apiVersion} ${object.kind}/${object.metadata?.name}`;
  const custom = CUSTOM_RESOURCES[object.apiVersion];
  if (!custom) {
    const problem = kubernetesProblem(object, version);
    if (problem) throw new Error(`${where}: Kubernetes ${version}: ${problem}`);
    return;
  }
  const model = custom[object.kind] as Model | undefined;
  if (typeof model !== "function") throw new Error(`${where}: no schema for this kind`);
  try {
    new model(object).validate();
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`);
  }
}

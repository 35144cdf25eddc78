import * as certManager from "@kubernetes-models/cert-manager/cert-manager.io/v1";
import * as keda from "@kubernetes-models/keda/keda.sh/v1alpha1";
import * as monitoring from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import * as apps from "kubernetes-models/apps/v1";
import * as autoscaling from "kubernetes-models/autoscaling/v2";
import * as batch from "kubernetes-models/batch/v1";
import * as networking from "kubernetes-models/networking.k8s.io/v1";
import * as policy from "kubernetes-models/policy/v1";
import * as rbac from "kubernetes-models/rbac.authorization.k8s.io/v1";
import * as core from "kubernetes-models/v1";
import type { K8sObject } from "./helm";

type Model = new (data: unknown) => { validate(): void };

/** The API versions a Pressroom chart may render, with their schema models. */
const API_VERSIONS: Record<string, Record<string, unknown>> = {
  v1: core,
  "apps/v1": apps,
  "batch/v1": batch,
  "policy/v1": policy,
  "autoscaling/v2": autoscaling,
  "networking.k8s.io/v1": networking,
  "rbac.authorization.k8s.io/v1": rbac,
  "keda.sh/v1alpha1": keda,
  "cert-manager.io/v1": certManager,
  "monitoring.coreos.com/v1": monitoring,
};

/**
 * Validates one object against its Kubernetes (or CRD) OpenAPI schema; throws
 * naming the object and the first violation. A kind with no schema here
 * fails: it cannot be proven.
 */
export function validateObject(object: K8sObject): void {
  const where = `${object.apiVersion} ${object.kind}/${object.metadata?.name}`;
  const group = API_VERSIONS[object.apiVersion];
  const model = group?.[object.kind] as Model | undefined;
  if (typeof model !== "function") throw new Error(`${where}: no schema for this kind`);
  try {
    new model(object).validate();
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`);
  }
}

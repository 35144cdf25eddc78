import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import Ajv, { type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import { CHART_DIR, type K8sObject } from "./helm";

/**
 * Kubernetes' own API schemas of one version, as kubeconform checks manifests against them:
 * every object's apiVersion must be served by that version, and its fields have the types,
 * enums and required fields of that version's OpenAPI document.
 *
 * - 1.25 (kubernetes-models 4.1.0, generated from Kubernetes 1.25's OpenAPI): strict, as
 *   `kubeconform -strict`: a field that version does not know fails (the schemas are JSON,
 *   compiled here with `additionalProperties: false` on every object that lists its fields).
 * - 1.33 (kubernetes-models 4.5.1, from 1.33's): that package ships compiled validators,
 *   which allow unknown fields.
 *
 * The packages keep every API version Kubernetes ever served, so which ones a version still
 * serves is listed here, for the built-in groups a chart renders (from Kubernetes' deprecated
 * API migration guide: batch/v1beta1 and policy/v1beta1 went in 1.25, autoscaling/v2beta2 in 1.26).
 */
export const SCHEMA_PACKAGES = {
  "1.25": "kubernetes-models-1.25",
  "1.33": "kubernetes-models",
} as const;

const STABLE = ["v1", "apps/v1", "batch/v1", "policy/v1", "autoscaling/v1", "autoscaling/v2", "networking.k8s.io/v1", "rbac.authorization.k8s.io/v1"];
const SERVED: Record<keyof typeof SCHEMA_PACKAGES, string[]> = {
  "1.25": [...STABLE, "autoscaling/v2beta2"],
  "1.33": STABLE,
};

export type KubernetesVersion = keyof typeof SCHEMA_PACKAGES;

/** The Kubernetes versions the chart claims: Chart.yaml's kubeVersion lower bound, and the versions its annotation names as tested. */
export function claimedVersions(): { kubeVersion: string; tested: string[] } {
  const chart = parse(readFileSync(path.join(CHART_DIR, "Chart.yaml"), "utf8")) as { kubeVersion: string; annotations?: Record<string, string> };
  const tested = (chart.annotations?.["pressroom/kubernetes-versions"] ?? "")
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
  return { kubeVersion: chart.kubeVersion, tested };
}

/** A group/version's name in the schemas' ids: "" → core, "networking.k8s.io" → networking, "rbac.authorization.k8s.io" → rbac. */
function schemaId(apiVersion: string, kind: string): string {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["core", apiVersion];
  return `io.k8s.api.${group!.split(".")[0]}.${version}.${kind}`;
}

const fileOf = (id: string): string =>
  id
    .split(".")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");

type Schema = Record<string, unknown>;

/** Loads a package's files by path (the packages' exports maps do not list their schema files). */
const load = createRequire(__filename);

/** A package's folder, found through its "apps" entry point. */
const packageRoot = (packageName: string): string => path.resolve(path.dirname(load.resolve(`${packageName}/apps`)), "..");

/** kubeconform -strict's rule: an object schema that lists its properties takes no others (maps and free-form objects keep theirs). */
function strict(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strict);
  if (!schema || typeof schema !== "object") return schema;
  const out: Schema = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === "enum" ? value : strict(value)]));
  if (out.properties && out.additionalProperties === undefined && !out["x-kubernetes-preserve-unknown-fields"]) out.additionalProperties = false;
  return out;
}

/** Kubernetes' resource quantity: a signed decimal with an optional binary (Ki…Ei), decimal (m, k, M…E) or exponent suffix. */
const QUANTITY = /^[+-]?(\d+\.?\d*|\.\d+)([KMGTPE]i|[mkMGTPE]|[eE][+-]?\d+)?$/;

/** The strict validator of a package that ships its schemas as JSON: each kind's schema and those it refers to, as the package registers them. */
function jsonSchemaValidator(packageName: string): (object: K8sObject) => string | undefined {
  const root = packageRoot(packageName);
  const registry = load(load.resolve("@kubernetes-models/validate", { paths: [root] })) as { register: (id: string, schema: Schema) => void };
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  ajv.addFormat("quantity", QUANTITY);
  const compiled = new Map<string, ValidateFunction | undefined>();
  return (object) => {
    const id = schemaId(object.apiVersion, object.kind);
    if (!compiled.has(id)) {
      const file = path.join(root, "_schemas", `${fileOf(id)}.js`);
      if (!existsSync(file)) {
        compiled.set(id, undefined);
        return "no schema for this kind";
      }
      const original = registry.register;
      registry.register = (schemaName, schema) => {
        if (!ajv.getSchema(schemaName)) ajv.addSchema(strict(schema) as Schema, schemaName);
      };
      try {
        (load(file) as { addSchema: () => void }).addSchema();
      } finally {
        registry.register = original;
      }
      compiled.set(id, ajv.getSchema(id));
    }
    const validate = compiled.get(id);
    if (!validate) return "no schema for this kind";
    return validate(object) ? undefined : ajv.errorsText(validate.errors, { dataVar: "" });
  };
}

type Model = new (data: unknown) => { validate(): void };

/** The validator of a package of compiled models: its class for the kind, whose validate() checks types, enums and required fields. */
function modelValidator(packageName: string): (object: K8sObject) => string | undefined {
  return (object) => {
    const [group, version] = object.apiVersion.includes("/") ? object.apiVersion.split("/") : ["", object.apiVersion];
    let model: Model | undefined;
    try {
      model = (load(`${packageName}/${group ? `${group}/` : ""}${version}`) as Record<string, Model>)[object.kind];
    } catch {
      model = undefined;
    }
    if (typeof model !== "function") return "no schema for this kind";
    try {
      new model(object).validate();
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  };
}

const validators = new Map<KubernetesVersion, (object: K8sObject) => string | undefined>();

/** The first problem of one object (a built-in kind) against one Kubernetes version's schemas, or undefined. */
export function kubernetesProblem(object: K8sObject, version: KubernetesVersion): string | undefined {
  if (!SERVED[version].includes(object.apiVersion)) return `${object.apiVersion} is not served by Kubernetes ${version}`;
  if (!validators.has(version)) {
    const packageName = SCHEMA_PACKAGES[version];
    validators.set(version, version === "1.25" ? jsonSchemaValidator(packageName) : modelValidator(packageName));
  }
  return validators.get(version)!(object);
}

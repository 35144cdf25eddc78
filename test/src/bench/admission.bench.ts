/**
 * Admission benchmark: what auth + rate + quota + concurrency add to a request.
 *
 *   npx tsx test/src/bench/admission.bench.ts [--requests 3000] [--json]
 *
 * Boots identity, metering and gateway as separate processes (its own
 * database and nats-server, like the e2e tests), then measures, one request
 * at a time after a warm-up, in interleaved rounds (each round runs every
 * scenario once in a shuffled order, so other load on the machine weighs on
 * all of them alike):
 *
 *   livez          GET /livez on the gateway: HTTP and koa, no admission (the floor)
 *   render-401     POST /v1/render without a key: refused before admission
 *   render-422     POST /v1/render with a key and a bad body: auth (cached) + Admit
 *                  (rate) + body check, nothing else: render-422 − render-401 is
 *                  what admission adds over HTTP
 *   usage          GET /v1/keys/usage: auth (cached) + Admit + GetUsage
 *   webhook-secret GET /v1/keys/webhook-secret: auth (cached) + Admit + GetWebhookSecret
 *   admit          the Admit RPC alone (rate window only), from this process
 *   admit-render   the Admit RPC for a render (rate + quota + concurrency slot),
 *                  each slot given back with Release outside the timed call
 *   authenticate   identity's Authenticate RPC (what a gateway pays once per key per 2 s)
 *
 * and the same admit-render with 16 callers at once. Business-plan keys
 * (1,000 requests a minute) are used in rotation so that every request is
 * admitted, not refused. The figures that matter: p50 of render-422 −
 * render-401 (admission over HTTP) and p50 of admit-render (the full
 * admission decision, as the gateway calls it for an accepted render).
 */
import { randomBytes } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { identityV1, meteringV1 } from "@pressroom/contracts";
import { call, createGrpcClient, newId } from "@pressroom/platform";
import { startTestStack } from "@pressroom/stack";

interface Stats {
  name: string;
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
}

function stats(name: string, samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  return { name, n: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length, max: sorted.at(-1)! };
}

async function measureConcurrent(count: number, workers: number, fn: (worker: number) => Promise<void>): Promise<number[]> {
  const samples: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (next < count) {
        next++;
        const start = performance.now();
        await fn(worker);
        samples.push(performance.now() - start);
      }
    }),
  );
  return samples;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { requests: { type: "string", default: "3000" }, json: { type: "boolean", default: false } } });
  const count = Number(values.requests);
  const warmup = 300;
  const log = (line: string) => process.stderr.write(`${line}\n`);

  log("starting identity, metering and gateway…");
  const stack = await startTestStack({ only: ["identity", "metering", "gateway"], env: { LOG_LEVEL: "warn" } });
  const identity = createGrpcClient(identityV1.IdentityServiceClient, `127.0.0.1:${stack.ports.grpc.identity}`);
  const metering = createGrpcClient(meteringV1.MeteringServiceClient, `127.0.0.1:${stack.ports.grpc.metering}`);
  try {
    // Enough business keys that no key passes 1,000 requests in a minute.
    const perKey = 800;
    const keys = await Promise.all(
      Array.from({ length: Math.ceil((5 * (count + warmup)) / perKey) + 1 }, async () => {
        const created = await call(identity, identity.createKey, { email: `bench-${randomBytes(6).toString("hex")}@example.com`, plan: "business" });
        return { apiKey: created.apiKey, keyId: created.key!.keyId };
      }),
    );
    let rotation = 0;
    const nextKey = () => keys[Math.floor(rotation++ / perKey) % keys.length]!;
    const postRender = async (apiKey: string | undefined, expected: number) => {
      const response = await fetch(`${stack.baseUrl}/v1/render`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: '{"html":"<p>x</p>","data":1}',
      });
      await response.arrayBuffer();
      if (response.status !== expected) throw new Error(`POST /v1/render answered ${response.status}, not ${expected}`);
    };
    const get = async (path: string, apiKey?: string) => {
      const response = await fetch(`${stack.baseUrl}${path}`, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
    };

    const admit = async (renderJobId: string, keyId = nextKey().keyId) => {
      const response = await call(metering, metering.admit, { keyId, plan: "business", renderJobId });
      if (response.decision !== meteringV1.Decision.DECISION_ALLOWED) throw new Error(`Admit answered ${meteringV1.Decision[response.decision]}`);
    };
    const first = keys[0]!.apiKey;

    // Interleaved: every round runs each scenario once, in a shuffled order,
    // so that load from anything else on the machine weighs on all alike.
    const scenarios: { name: string; run: () => Promise<void>; after?: () => Promise<void> }[] = [
      { name: "livez", run: () => get("/livez") },
      { name: "render-401", run: () => postRender(undefined, 401) },
      { name: "render-422", run: () => postRender(nextKey().apiKey, 422) },
      { name: "usage", run: () => get("/v1/keys/usage", nextKey().apiKey) },
      { name: "webhook-secret", run: () => get("/v1/keys/webhook-secret", nextKey().apiKey) },
      { name: "admit", run: () => admit("") },
      { name: "authenticate", run: () => call(identity, identity.authenticate, { apiKey: first }).then(() => undefined) },
    ];
    const samples = new Map<string, number[]>([...scenarios.map((sc) => [sc.name, []] as [string, number[]]), ["admit-render", []]]);
    for (let round = 0; round < warmup + count; round++) {
      const jobId = newId("job");
      const order = [...scenarios, { name: "admit-render", run: () => admit(jobId), after: () => call(metering, metering.release, { jobId, refund: true }).then(() => undefined) }].sort(() => Math.random() - 0.5);
      for (const scenario of order) {
        const start = performance.now();
        await scenario.run();
        const elapsed = performance.now() - start;
        if (round >= warmup) samples.get(scenario.name)!.push(elapsed);
        await scenario.after?.();
      }
    }
    const results: Stats[] = ["livez", "render-401", "render-422", "usage", "webhook-secret", "admit", "admit-render", "authenticate"].map((name) => stats(name, samples.get(name)!));

    // 16 callers at once, each on its own fresh key (a key has 10 slots).
    const workerKeys = await Promise.all(
      Array.from({ length: 16 }, async () => (await call(identity, identity.createKey, { email: `bench-${randomBytes(6).toString("hex")}@example.com`, plan: "business" })).key!.keyId),
    );
    const loaded: number[] = [];
    await measureConcurrent(Math.min(count, 16 * 900), 16, async (worker) => {
      const jobId = newId("job");
      const start = performance.now();
      await admit(jobId, workerKeys[worker]);
      loaded.push(performance.now() - start);
      await call(metering, metering.release, { jobId, refund: true });
    });
    results.push(stats("admit-render ×16", loaded));

    const by = Object.fromEntries(results.map((r) => [r.name, r]));
    const added = by["render-422"]!.p50 - by["render-401"]!.p50;
    const machine = `${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`;
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ requests: count, machine, results, addedP50Ms: added }, null, 2)}\n`);
      return;
    }
    const f = (ms: number) => ms.toFixed(2).padStart(8);
    process.stdout.write(`\nadmission benchmark: ${count} requests each, sequential after ${warmup} warm-up (ms); ${machine}\n\n`);
    process.stdout.write(`${"".padEnd(18)}${"p50".padStart(8)}${"p90".padStart(8)}${"p99".padStart(8)}${"mean".padStart(8)}${"max".padStart(8)}\n`);
    for (const r of results) process.stdout.write(`${r.name.padEnd(18)}${f(r.p50)}${f(r.p90)}${f(r.p99)}${f(r.mean)}${f(r.max)}\n`);
    const full = by["admit-render"]!.p50;
    process.stdout.write(
      `\nadded by admission at p50: over HTTP (render-422 − render-401) ${added.toFixed(2)} ms; ` +
        `the full decision for a render (Admit RPC: rate + quota + slot) ${full.toFixed(2)} ms. Budget 3 ms: ${Math.max(added, full) <= 3 ? "met" : "NOT MET"}.\n`,
    );
  } finally {
    identity.close();
    metering.close();
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

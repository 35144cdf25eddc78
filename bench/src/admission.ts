import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Client } from "@grpc/grpc-js";
import { identityV1, meteringV1 } from "@pressroom/contracts";
import { call, createGrpcClient, newId } from "@pressroom/platform";
import { startTestStack } from "@pressroom/stack";
import { percentile } from "./stats";

/**
 * What auth + rate + quota + concurrency add to a request. Boots identity,
 * metering and gateway as separate processes, then measures, one request at
 * a time after a warm-up, in interleaved rounds (each round runs every
 * scenario once in a shuffled order, so other load on the machine weighs on
 * all of them alike):
 *
 *   livez          GET /livez on the gateway: HTTP and koa, no admission
 *   render-401     POST /v1/render without a key: refused before admission
 *   render-422     POST /v1/render with a key and a bad body: auth (cached) +
 *                  Admit (rate) + body check; render-422 − render-401 is what
 *                  admission adds over HTTP
 *   usage          GET /v1/keys/usage: auth (cached) + Admit + GetUsage
 *   webhook-secret GET /v1/keys/webhook-secret: auth (cached) + Admit + GetWebhookSecret
 *   admit          the Admit RPC alone (rate window only)
 *   admit-render   the Admit RPC for a render (rate + quota + concurrency
 *                  slot), each slot given back outside the timed call
 *   authenticate   identity's Authenticate RPC (paid once per key per 2 s)
 *   health         grpc.health.v1 Check on metering: a call that does no
 *                  work, on the open connection (gRPC over mutual TLS)
 *   connect        the same on a new connection (a channel of its own, not
 *                  sharing the process's connections): TCP, the TLS 1.3
 *                  handshake with both certificates checked, HTTP/2 setup,
 *                  one call; connect − health is what a connection costs
 *
 * and admit-render with 16 callers at once. Business-plan keys (1,000
 * requests a minute) are used in rotation so that every request is admitted.
 */
export async function admission(count: number): Promise<string> {
  const warmup = 300;
  const stack = await startTestStack({ only: ["identity", "metering", "gateway"], env: { LOG_LEVEL: "warn" } });
  // The timed calls are the gateway's, with its certificate; keys are made as the operator.
  const gatewayTls = stack.certificates.gateway;
  const identity = createGrpcClient(identityV1.IdentityServiceClient, `127.0.0.1:${stack.ports.grpc.identity}`, gatewayTls, "identity");
  const metering = createGrpcClient(meteringV1.MeteringServiceClient, `127.0.0.1:${stack.ports.grpc.metering}`, gatewayTls, "metering");
  const operator = createGrpcClient(identityV1.IdentityServiceClient, `127.0.0.1:${stack.ports.grpc.identity}`, stack.certificates.admin, "identity");
  const newKey = async () => {
    const created = await call(operator, operator.createKey, { email: `bench-${randomBytes(6).toString("hex")}@pressroom.test`, plan: "business" });
    return { apiKey: created.apiKey, keyId: created.key!.keyId };
  };
  try {
    // Enough keys that none passes 1,000 requests in a minute.
    const perKey = 800;
    const keys = await Promise.all(Array.from({ length: Math.ceil((5 * (count + warmup)) / perKey) + 1 }, newKey));
    let rotation = 0;
    const nextKey = () => keys[Math.floor(rotation++ / perKey) % keys.length]!;
    const expect = async (response: Response, status: number, what: string) => {
      await response.arrayBuffer();
      if (response.status !== status) throw new Error(`${what} answered ${response.status}, not ${status}`);
    };
    const postRender = async (apiKey: string | undefined, status: number) =>
      expect(
        await fetch(`${stack.baseUrl}/v1/render`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
          body: '{"html":"<p>x</p>","data":1}',
        }),
        status,
        "POST /v1/render",
      );
    const get = async (path: string, apiKey?: string) =>
      expect(await fetch(`${stack.baseUrl}${path}`, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} }), 200, path);
    const admit = async (renderJobId: string, keyId = nextKey().keyId) => {
      const response = await call(metering, metering.admit, meteringV1.AdmitRequest.fromPartial({ keyId, plan: "business", renderJobId }));
      if (response.decision !== meteringV1.Decision.DECISION_ALLOWED) throw new Error(`Admit answered ${meteringV1.Decision[response.decision]}`);
    };
    const healthCheck = (client: Client) =>
      new Promise<void>((resolve, reject) =>
        client.makeUnaryRequest(
          "/grpc.health.v1.Health/Check",
          (request: Buffer) => request,
          (response: Buffer) => response,
          Buffer.alloc(0),
          { deadline: Date.now() + 5_000 },
          (err) => (err ? reject(err) : resolve()),
        ),
      );
    const healthClient = createGrpcClient(Client, `127.0.0.1:${stack.ports.grpc.metering}`, gatewayTls, "metering");
    const connect = async () => {
      const fresh = createGrpcClient(Client, `127.0.0.1:${stack.ports.grpc.metering}`, gatewayTls, "metering", { "grpc.use_local_subchannel_pool": 1 });
      try {
        await healthCheck(fresh);
      } finally {
        fresh.close();
      }
    };
    const release = (jobId: string) => call(metering, metering.release, { jobId, refund: true }).then(() => undefined);
    const first = keys[0]!.apiKey;

    const scenarios: { name: string; run: () => Promise<void> }[] = [
      { name: "livez", run: () => get("/livez") },
      { name: "render-401", run: () => postRender(undefined, 401) },
      { name: "render-422", run: () => postRender(nextKey().apiKey, 422) },
      { name: "usage", run: () => get("/v1/keys/usage", nextKey().apiKey) },
      { name: "webhook-secret", run: () => get("/v1/keys/webhook-secret", nextKey().apiKey) },
      { name: "admit", run: () => admit("") },
      { name: "authenticate", run: () => call(identity, identity.authenticate, { apiKey: first }).then(() => undefined) },
      { name: "health", run: () => healthCheck(healthClient) },
      { name: "connect", run: connect },
    ];
    const samples = new Map<string, number[]>([...scenarios.map((s) => [s.name, []] as [string, number[]]), ["admit-render", []]]);
    for (let round = 0; round < warmup + count; round++) {
      const jobId = newId("job");
      const order = [...scenarios, { name: "admit-render", run: () => admit(jobId) }].sort(() => Math.random() - 0.5);
      for (const scenario of order) {
        const start = performance.now();
        await scenario.run();
        if (round >= warmup) samples.get(scenario.name)!.push(performance.now() - start);
      }
      await release(jobId);
    }

    healthClient.close();

    // 16 callers at once, each on its own key (a business key has 10 slots).
    const workerKeys = await Promise.all(Array.from({ length: 16 }, newKey));
    const loaded: number[] = [];
    let issued = 0;
    const concurrentCount = Math.min(count, 16 * 900);
    await Promise.all(
      workerKeys.map(async ({ keyId }) => {
        while (issued < concurrentCount) {
          issued++;
          const jobId = newId("job");
          const start = performance.now();
          await admit(jobId, keyId);
          loaded.push(performance.now() - start);
          await release(jobId);
        }
      }),
    );
    samples.set("admit-render ×16", loaded);

    const row = (name: string) => {
      const sorted = [...samples.get(name)!].sort((a, b) => a - b);
      const f = (p: number) => percentile(sorted, p).toFixed(2);
      return { name, p50: percentile(sorted, 50), line: `| ${name} | ${sorted.length} | ${f(50)} | ${f(90)} | ${f(99)} |` };
    };
    const rows = [...samples.keys()].map(row);
    const p50 = (name: string) => rows.find((r) => r.name === name)!.p50;
    const overHttp = p50("render-422") - p50("render-401");
    const decision = p50("admit-render");
    for (const r of rows) process.stdout.write(`${r.line}\n`);
    return [
      `${count} requests of each kind, one at a time after ${warmup} warm-up rounds (ms):`,
      "",
      "| scenario | requests | p50 | p90 | p99 |",
      "|---|---|---|---|---|",
      ...rows.map((r) => r.line),
      "",
      `Added by admission at p50: over HTTP (render-422 − render-401) ${overHttp.toFixed(2)} ms; the full decision for a render ` +
        `(Admit RPC: rate + quota + slot) ${decision.toFixed(2)} ms. Target ≤ 3 ms: ${Math.max(overHttp, decision) <= 3 ? "met" : "missed"}.`,
      `A new gRPC connection (connect − health: TCP, the mutual-TLS handshake, HTTP/2) at p50: ${(p50("connect") - p50("health")).toFixed(2)} ms.`,
    ].join("\n");
  } finally {
    identity.close();
    metering.close();
    operator.close();
    await stack.stop();
  }
}

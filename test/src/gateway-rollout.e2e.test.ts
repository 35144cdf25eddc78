import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { distinctFreePorts, serviceEnv, startService, stopService, waitFor, waitReady, type ServiceProcess } from "@pressroom/stack";
import { Balancer, type Backend } from "./test-support/balancer";
import { startHarness, type Harness } from "./test-support/harness";

/**
 * A rolling update of the gateway under load fails no request (issue 45). Two real gateway
 * processes of a test stack sit behind a small balancer that follows their readiness as an
 * endpoints controller does; while sync renders keep coming, each gateway in turn gets SIGTERM
 * and a new one takes its place. On SIGTERM a gateway turns not ready but keeps serving
 * (SHUTDOWN_DELAY_MS) until the balancer has dropped it, then closes its listener, and a sync
 * request still waiting near its bound is answered 202 with its job, which goes on rendering.
 * The load is bounded in count and time and stays on loopback.
 */

/** Short, so that a request pinned to a stopping gateway outlasts its bound: 1.5 s serving not ready, answers at 9 − 5 s. */
const GATEWAY_ENV = { SHUTDOWN_DELAY_MS: "1500", SHUTDOWN_TIMEOUT_MS: "9000" };
const MAX_REQUESTS = 400;
const MAX_LOAD_MS = 150_000;
const WORKERS = 4;

interface Outcome {
  status: number | string;
  backend?: string;
  id?: string;
}

describe("a rolling update of the gateway under load (issue 45)", () => {
  let h: Harness;
  let dir: string;
  let key: string;
  const balancer = new Balancer(200);
  const gateways = new Map<string, ServiceProcess>();

  /** A gateway process of the stack's, on ports of its own, in the balancer's backends. */
  const startGateway = async (name: string): Promise<Backend> => {
    const [http, health] = (await distinctFreePorts(2)) as [number, number];
    const ports = { ...h.stack.ports, http, health: { ...h.stack.ports.health, gateway: health } };
    const env = serviceEnv("gateway", {
      databaseUrls: h.stack.databaseUrls,
      natsUrl: h.stack.natsUrl,
      ports,
      logDir: dir,
      certificates: h.stack.certificates,
      sealingKey: h.stack.sealingKey,
      destinationSealingKey: h.stack.destinationSealingKey,
      publicBaseUrl: h.stack.baseUrl,
      env: { LOG_LEVEL: "info" },
      serviceEnv: { gateway: GATEWAY_ENV },
    });
    const proc = startService("gateway", env, path.join(dir, name));
    gateways.set(name, proc);
    await waitReady("gateway", health, proc.child);
    const backend = { name, httpPort: http, healthPort: health };
    balancer.add(backend);
    return backend;
  };

  before(async () => {
    h = await startHarness({ serviceEnv: { gateway: GATEWAY_ENV } });
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-rollout-"));
    ({ apiKey: key } = await h.admin.createKey("business"));
    gateways.set("a", h.stack.services.processes.get("gateway")!);
    balancer.add({ name: "a", httpPort: h.stack.ports.http, healthPort: h.stack.ports.health.gateway });
    await startGateway("b");
    await balancer.start();
    await waitFor("both gateways in rotation", async () => balancer.ready("a") && balancer.ready("b"), 10_000);
  });
  after(async () => {
    await balancer.stop();
    await Promise.all([...gateways.entries()].filter(([name]) => name !== "a").map(([, proc]) => stopService(proc.child, 30_000)));
    await h?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const render = async (body: object, pin?: string): Promise<Outcome> => {
    try {
      const response = await fetch(`${balancer.url}/v1/render`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(pin ? { "x-balancer-pin": pin } : {}) },
        body: JSON.stringify(body),
      });
      const json = (await response.json().catch(() => ({}))) as { id?: string };
      return { status: response.status, backend: response.headers.get("x-backend") ?? undefined, id: json.id };
    } catch (err) {
      return { status: (err as Error).message };
    }
  };

  it("fails no request while each gateway is replaced; a sync request caught by the stop is answered 202 and its job succeeds", async () => {
    const outcomes: Outcome[] = [];
    let stopLoad = false;
    const started = Date.now();
    const worker = async (w: number) => {
      for (let i = 0; !stopLoad && outcomes.length < MAX_REQUESTS && Date.now() - started < MAX_LOAD_MS; i++) {
        outcomes.push(await render({ html: "<p>Roll {{w}}.{{i}}</p>", data: { w, i } }));
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));

    const served = (name: string) => balancer.sent.get(name) ?? 0;
    await waitFor("the load under way", async () => outcomes.length >= 2 * WORKERS, 60_000);
    const caught: Outcome[] = [];
    for (const [old, replacement] of [
      ["a", "c"],
      ["b", "d"],
    ] as const) {
      // A sync request waiting at the old gateway when it is told to stop (its page waits 8 s before it prints).
      const waiting = render({ html: "<p>Caught by the stop</p>", data: {}, options: { wait_for: { delay_ms: 8_000 } } }, old);
      await waitFor(`the pinned request in flight at gateway ${old}`, async () => balancer.pinnedInFlight(old) > 0, 5_000);
      const stopped = stopService(gateways.get(old)!.child, 30_000);
      await startGateway(replacement);
      await stopped;
      balancer.remove(old);
      caught.push(await waiting);
      await waitFor(`gateway ${replacement} in rotation`, async () => balancer.ready(replacement), 10_000);
    }
    await waitFor("the new gateways under load", async () => served("c") >= WORKERS && served("d") >= WORKERS, 60_000);
    stopLoad = true;
    await load;

    const failed = [...outcomes, ...caught].filter((o) => o.status !== 200 && o.status !== 202);
    assert.deepEqual(failed, [], `${failed.length} of ${outcomes.length + caught.length} requests failed`);
    assert.ok(outcomes.length >= 20, `${outcomes.length} requests under load`);
    for (const name of ["a", "b", "c", "d"]) assert.ok(served(name) > 0, `gateway ${name} served: ${JSON.stringify([...balancer.sent])}`);

    assert.deepEqual(
      caught.map((o) => [o.status, o.backend]),
      [
        [202, "a"],
        [202, "b"],
      ],
      "each stopping gateway answered its waiting request 202 with its job",
    );
    for (const { id } of [...caught, ...outcomes.filter((o) => o.status === 202)]) {
      let status = "";
      await waitFor(
        `job ${id} ends`,
        async () => {
          const response = await fetch(`${balancer.url}/v1/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } });
          status = ((await response.json()) as { status: string }).status;
          return status === "succeeded" || status === "failed";
        },
        60_000,
        250,
      );
      assert.equal(status, "succeeded", `job ${id}`);
    }

    for (const old of ["a", "b"]) {
      const proc = gateways.get(old)!;
      assert.deepEqual({ code: proc.child.exitCode, signal: proc.child.signalCode }, { code: 0, signal: null }, `gateway ${old} stopped by itself`);
      assert.doesNotMatch(proc.output.join(""), /shutdown step failed/, `gateway ${old}`);
    }
  });
});

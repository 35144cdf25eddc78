import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { makeGenericClientConstructor, type ServiceDefinition, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { AppError } from "../errors";
import type { GrpcServerHandle, call as callType } from "../grpc";
import { Lifecycle, startHealthServer } from "../lifecycle";
import { createLogger } from "../logger";
import { startTelemetry, shutdownTelemetry } from "./setup";

// Telemetry first, as the preload does; the gRPC helpers, whose instruments are made when they load, come after (in before()).
startTelemetry({ serviceName: "metrics-test" });

const identity = { serialize: (value: Buffer) => value, deserialize: (value: Buffer) => value };
const definition: ServiceDefinition = {
  say: {
    path: "/test.v1.EchoService/Say",
    requestStream: false,
    responseStream: false,
    requestSerialize: identity.serialize,
    requestDeserialize: identity.deserialize,
    responseSerialize: identity.serialize,
    responseDeserialize: identity.deserialize,
  },
};
const EchoClient = makeGenericClientConstructor(definition, "EchoService");
type Echo = InstanceType<typeof EchoClient> & { say: Parameters<typeof callType<Buffer, Buffer>>[1] };

/** Scrapes /metrics and returns its sample lines. */
async function scrape(port: number): Promise<string[]> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/plain/);
  return (await response.text()).split("\n").filter((line) => line && !line.startsWith("#"));
}

describe("the metrics kit", () => {
  const logger = createLogger("metrics-test", "error", new Writable({ write: (_chunk, _encoding, done) => done() }));
  const lifecycle = new Lifecycle(logger, 1_000);
  let grpc: GrpcServerHandle;
  let client: Echo;
  let healthPort: number;
  let call: typeof callType;
  const tlsDir = mkdtempSync(path.join(tmpdir(), "pressroom-metrics-tls-"));

  before(async () => {
    const kit = await import("../grpc.js");
    call = kit.call;
    const { createGrpcClient, startGrpcServer, unary } = kit;
    const implementation: UntypedServiceImplementation = {
      say: unary(async (request: Buffer) => {
        if (request.toString() === "missing") throw new AppError("NOT_FOUND", "no such thing", "Ask for another.");
        return request;
      }),
    };
    const { ensureGrpcCertificates } = await import("../grpc-certificates.js");
    const certificates = await ensureGrpcCertificates(tlsDir, ["storage", "gateway"]);
    grpc = await startGrpcServer({
      port: 0,
      host: "127.0.0.1",
      tls: certificates.storage,
      services: [{ definition, implementation, callers: { say: ["gateway"] } }],
    });
    client = createGrpcClient(EchoClient, `127.0.0.1:${grpc.port}`, certificates.gateway, "storage") as Echo;
    healthPort = (await startHealthServer(lifecycle, 0, "127.0.0.1")).port;
  });

  after(async () => {
    client.close();
    await grpc.stop(1_000);
    await lifecycle.shutdown("test");
    await shutdownTelemetry();
    rmSync(tlsDir, { recursive: true, force: true });
  });

  it("times every gRPC call, served and made, by service, method and status", async () => {
    assert.deepEqual(await call(client, client.say, Buffer.from("hello")), Buffer.from("hello"));
    await assert.rejects(call(client, client.say, Buffer.from("missing")), { code: "NOT_FOUND" });
    const lines = await scrape(healthPort);
    for (const side of ["server", "client"]) {
      for (const code of ["OK", "NOT_FOUND"]) {
        const series = `rpc_${side}_duration_count{rpc_system="grpc",rpc_service="test.v1.EchoService",rpc_method="Say",rpc_grpc_status_code="${code}"} 1`;
        assert.ok(lines.includes(series), `${series} in:\n${lines.filter((l) => l.startsWith("rpc_")).join("\n")}`);
      }
    }
  });

  it("serves the Node runtime's metrics: event-loop delay, heap, GC", async () => {
    globalThis.gc?.();
    const wanted = ["nodejs_eventloop_delay_p99", "v8js_memory_heap_used", "nodejs_eventloop_utilization"];
    // The event-loop delay is sampled on a timer and its histogram starts afresh at each
    // scrape: right after one (the test above), a loaded machine may not have sampled yet.
    let names = new Set<string>();
    for (const started = Date.now(); Date.now() - started < 10_000; await new Promise((resolve) => setTimeout(resolve, 100))) {
      names = new Set((await scrape(healthPort)).map((line) => line.split(/[{ ]/)[0]!));
      if (wanted.every((name) => names.has(name))) break;
    }
    for (const name of wanted) assert.ok(names.has(name), name);
  });
});

import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect as connectTcp, createServer as createTcpServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Kysely } from "kysely";
import { connect as connectNats } from "nats";
import { pingDb } from "./db/db";
import { ensureGrpcCertificates } from "./grpc-certificates";
import { request } from "node:http";
import { startService, type Bus, type ServiceConfig } from "./run-service";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether a TCP connection to the port is accepted. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function readyz(port: number): Promise<number> {
  return (await fetch(`http://127.0.0.1:${port}/readyz`)).status;
}

/**
 * The runner against a real Postgres, a nats-server of its own and real gRPC
 * and HTTP servers: each shutdown stage finds the previous ones done and the
 * later ones not yet begun.
 */
describe("runService's shutdown order", () => {
  const dir = mkdtempSync(join(tmpdir(), "run-service-test-"));
  let nats: ChildProcess;
  let natsUrl: string;

  before(async () => {
    const port = await freePort();
    natsUrl = `nats://127.0.0.1:${port}`;
    nats = spawn("nats-server", ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", join(dir, "jetstream")], { stdio: "ignore" });
    for (let attempt = 0; ; attempt++) {
      const nc = await connectNats({ servers: natsUrl }).catch(() => undefined);
      if (nc) {
        await nc.close();
        break;
      }
      if (attempt === 100) throw new Error("the test's nats-server did not start");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  after(() => {
    nats.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it("not ready → stop accepting → stop consuming → finish work → close NATS, clients, Postgres → stop the probes", async () => {
    const tls = (await ensureGrpcCertificates(join(dir, "tls"), ["storage"])).storage;
    const config: ServiceConfig = {
      LOG_LEVEL: "silent",
      HEALTH_PORT: 0,
      SHUTDOWN_TIMEOUT_MS: 20_000,
      GRPC_TLS_CA: tls.ca,
      GRPC_TLS_CERT: tls.cert,
      GRPC_TLS_KEY: tls.key,
      GRPC_PORT: 0,
      GRPC_HOST: "127.0.0.1",
      HTTP_PORT: 0,
      HTTP_HOST: "127.0.0.1",
      DATABASE_URL,
      NATS_URL: natsUrl,
    };
    const steps: string[] = [];
    let ports = { healthPort: 0, grpcPort: 0, httpPort: 0 };
    let deps: { bus: Bus; db: Kysely<unknown> } | undefined;
    /** What each step sees of the servers and the connections. */
    const look = async (step: string) => {
      const seen = [
        `ready ${(await readyz(ports.healthPort)) === 200}`,
        `grpc ${await accepts(ports.grpcPort)}`,
        `http ${await accepts(ports.httpPort)}`,
        `nats ${!deps!.bus.nc.isClosed()}`,
        `postgres ${await pingDb(deps!.db)}`,
      ];
      steps.push(`${step}: ${seen.join(", ")}`);
    };

    const started = await startService(
      {
        name: "runner-test",
        config: () => config,
        connect: async ({ database, nats: connectBus, closeWith }) => {
          const db = database<unknown>("runner_test");
          const bus = await connectBus({});
          closeWith("a client", () => look("close a client"));
          return { db, bus };
        },
        build: (connected) => {
          deps = connected;
          return {
            grpc: [],
            http: { listener: (_req, res) => res.end("ok"), requestTimeoutMs: 5_000 },
            consumers: {
              messages: {
                start: () => undefined,
                stop: () => look("stop consuming"),
                finish: () => look("finish work"),
              },
            },
            loops: { sweep: { start: () => undefined, stop: () => look("stop the sweep") } },
            afterWork: { browser: () => look("close the browser") },
          };
        },
      },
      { handleSignals: false },
    );
    ports = { healthPort: started.healthPort, grpcPort: started.grpcPort!, httpPort: started.httpPort! };
    await look("running");

    await started.lifecycle.shutdown("test");

    assert.deepEqual(steps, [
      "running: ready true, grpc true, http true, nats true, postgres true",
      "stop consuming: ready false, grpc false, http false, nats true, postgres true",
      "finish work: ready false, grpc false, http false, nats true, postgres true",
      "stop the sweep: ready false, grpc false, http false, nats true, postgres true",
      "close the browser: ready false, grpc false, http false, nats true, postgres true",
      "close a client: ready false, grpc false, http false, nats false, postgres true",
    ]);
    await assert.rejects(deps!.db.selectNoFrom((eb) => eb.lit(1).as("one")).execute(), "Postgres is closed");
    assert.equal(await accepts(started.healthPort), false, "the probe server stops last");
  });

  it("with SHUTDOWN_DELAY_MS: not ready at once but serving for the delay, then closed; a request still waiting near the bound is answered by answerNow, its connection closed", async () => {
    const tls = (await ensureGrpcCertificates(join(dir, "tls"), ["storage"])).storage;
    const config: ServiceConfig = {
      LOG_LEVEL: "silent",
      HEALTH_PORT: 0,
      SHUTDOWN_TIMEOUT_MS: 8_000,
      SHUTDOWN_DELAY_MS: 1_000,
      GRPC_TLS_CA: tls.ca,
      GRPC_TLS_CERT: tls.cert,
      GRPC_TLS_KEY: tls.key,
      HTTP_PORT: 0,
      HTTP_HOST: "127.0.0.1",
    };
    const waiting = new Set<() => void>();
    const events: string[] = [];
    const started = await startService(
      {
        name: "drain-test",
        config: () => config,
        connect: () => ({}),
        build: () => ({
          http: {
            requestTimeoutMs: 60_000,
            // "/wait" waits for an outcome that never comes, until it is told to answer now.
            listener: (req, res) => {
              if (req.url !== "/wait") return res.end("ok");
              waiting.add(() => res.writeHead(202).end("answered now"));
            },
            answerNow: () => {
              events.push("answer now");
              for (const answer of waiting) answer();
            },
          },
        }),
      },
      { handleSignals: false },
    );
    const port = started.httpPort!;
    const waited = new Promise<{ status?: number; connection?: string; body: string }>((resolve) => {
      request({ port, host: "127.0.0.1", path: "/wait" }, (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => {
          events.push("the waiting request answered");
          resolve({ status: res.statusCode, connection: res.headers.connection, body });
        });
      }).end();
    });
    while (waiting.size === 0) await new Promise((resolve) => setImmediate(resolve));

    const stopped = started.lifecycle.shutdown("test").then(() => events.push("stopped"));
    assert.equal(await readyz(started.healthPort), 503, "not ready at once");
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), "ok", "still serving during the delay");
    while (await accepts(port)) await new Promise((resolve) => setTimeout(resolve, 50));
    events.push("listener closed");
    assert.deepEqual(await waited, { status: 202, connection: "close", body: "answered now" });
    await stopped;
    // The client reads its answer's end about when the server, its connection closed, completes the stop.
    assert.deepEqual(events.slice(0, 2), ["listener closed", "answer now"]);
    assert.deepEqual(events.slice(2).sort(), ["stopped", "the waiting request answered"]);
  });
});

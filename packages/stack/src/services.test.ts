import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { GRPC_PEERS } from "@pressroom/platform";
import type { GrpcCertificates } from "@pressroom/platform";
import { DATABASE_SERVICES, databaseCredentials } from "./postgres";
import { billingNotice, DEFAULT_PORTS, SERVICE_NAMES, forwardedSettings, localPorts, serviceEnv, stopService } from "./services";

const database = databaseCredentials("postgres://admin:admin-pw@127.0.0.1:5432/pressroom", (service) => `pw-${service}`);

const certificates = Object.fromEntries(
  GRPC_PEERS.map((peer) => [peer, { ca: "/tls/ca.crt", cert: `/tls/${peer}.crt`, key: `/tls/${peer}.key` }]),
) as GrpcCertificates;
const sealingKey = { key: "/tls/sealing.key", publicKey: "/tls/sealing.pub" };
const destinationSealingKey = { key: "/tls/destination-sealing.key", publicKey: "/tls/destination-sealing.pub" };
/** What every stack gives serviceEnv, on the default ports. */
const stack = { databaseUrls: database.urls, natsUrl: "nats://stack", ports: DEFAULT_PORTS, logDir: "/tmp", certificates, sealingKey, destinationSealingKey };

/** Alive and not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe("up.sh's environment", () => {
  const caller = {
    PATH: "/usr/bin",
    RENDER_SLOTS: "4",
    RENDER_ADDR: "10.0.0.1:1",
    WEBHOOK_ALLOW_LOOPBACK: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
    OTEL_SERVICE_NAME: "mine",
    STRIPE_SECRET_KEY: "sk_test_x",
    CHROMIUM_PATH: "/usr/bin/chromium",
    BILLING_PROVIDER: "stripe",
    SYNC_WAIT_MS: "5000",
    SIGNUP_LIMIT_PER_HOUR: "50",
    WEBHOOK_ADDR: "10.0.0.1:2",
    WEBHOOK_SECRET_ENCRYPTION_KEY: "00",
    DATABASE_URL: "postgres://elsewhere/db",
    GRPC_PORT: "1",
    RENDERER: "not ours",
    RENDER_HEALTH_PORT: "19464",
  };

  it("forwards the services' own settings and nothing else", () => {
    assert.deepEqual(forwardedSettings(caller), {
      RENDER_SLOTS: "4",
      WEBHOOK_ALLOW_LOOPBACK: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
      STRIPE_SECRET_KEY: "sk_test_x",
      CHROMIUM_PATH: "/usr/bin/chromium",
      BILLING_PROVIDER: "stripe",
      SYNC_WAIT_MS: "5000",
      SIGNUP_LIMIT_PER_HOUR: "50",
    });
  });

  it("runs metering with the local payment provider unless the caller names one", () => {
    assert.equal(serviceEnv("metering", stack).BILLING_PROVIDER, "local");
    assert.equal(serviceEnv("metering", { ...stack, env: forwardedSettings(caller) }).BILLING_PROVIDER, "stripe");
  });

  it("gives the gateway the webhook service's loopback allowance, so it refuses with the request what the delivery would", () => {
    assert.equal(serviceEnv("gateway", stack).WEBHOOK_ALLOW_LOOPBACK, undefined);
    assert.equal(serviceEnv("gateway", { ...stack, serviceEnv: { webhook: { WEBHOOK_ALLOW_LOOPBACK: "true" } } }).WEBHOOK_ALLOW_LOOPBACK, "true");
    assert.equal(serviceEnv("gateway", { ...stack, env: forwardedSettings(caller) }).WEBHOOK_ALLOW_LOOPBACK, "true", "up.sh passes it to every service");
  });

  it("says at start that billing is the local provider, whose upgrades are free, unless the caller names another", () => {
    assert.match(billingNotice({ PATH: "/usr/bin" }), /^billing: the local payment provider, for development: .*WITHOUT payment/);
    assert.match(billingNotice({ BILLING_PROVIDER: "local" }), /WITHOUT payment/);
    assert.equal(billingNotice(caller), "billing: the stripe payment provider (BILLING_PROVIDER)");
  });

  it("keeps the stack's wiring over what is forwarded", () => {
    const env = serviceEnv("render", {
      ...stack,
      env: forwardedSettings(caller),
    });
    assert.equal(env.RENDER_SLOTS, "4");
    assert.equal(env.CHROMIUM_PATH, "/usr/bin/chromium");
    assert.equal(env.DATABASE_URL, database.urls.render);
    assert.equal(env.RENDER_ADDR, `127.0.0.1:${DEFAULT_PORTS.grpc.render}`);
    assert.equal(env.OTEL_SERVICE_NAME, "render");
    assert.equal(env.GRPC_PORT, String(DEFAULT_PORTS.grpc.render));
  });
});

describe("the stack's database credentials", () => {
  it("names each service's role after the database, with its own password, on the admin's server and database", () => {
    assert.deepEqual(database.urls, {
      identity: "postgres://pressroom_identity:pw-identity@127.0.0.1:5432/pressroom",
      storage: "postgres://pressroom_storage:pw-storage@127.0.0.1:5432/pressroom",
      metering: "postgres://pressroom_metering:pw-metering@127.0.0.1:5432/pressroom",
      render: "postgres://pressroom_render:pw-render@127.0.0.1:5432/pressroom",
      webhook: "postgres://pressroom_webhook:pw-webhook@127.0.0.1:5432/pressroom",
    });
  });

  it("gives each service its own URL only, the gateway none, and none the admin's", () => {
    const options = {
      ...stack,
      secretEncryptionKey: "0".repeat(64),
    };
    for (const name of SERVICE_NAMES) {
      const env = serviceEnv(name, options);
      assert.equal(
        env.DATABASE_URL,
        (DATABASE_SERVICES as readonly string[]).includes(name) ? database.urls[name as keyof typeof database.urls] : undefined,
        name,
      );
      assert.ok(!Object.values(env).some((value) => value?.includes("admin-pw")), `${name} holds no admin credential`);
    }
  });
});

describe("the stack's certificates", () => {
  it("gives each service the CA and its own certificate and key, and no other peer's", () => {
    for (const name of SERVICE_NAMES) {
      const env = serviceEnv(name, {
        ...stack,
        secretEncryptionKey: "k".repeat(64),
      });
      assert.deepEqual([env.GRPC_TLS_CA, env.GRPC_TLS_CERT, env.GRPC_TLS_KEY], ["/tls/ca.crt", `/tls/${name}.crt`, `/tls/${name}.key`]);
      const others = GRPC_PEERS.filter((peer) => peer !== name);
      const named = Object.values(env).filter((value) => others.some((peer) => value?.includes(`/tls/${peer}.`)));
      assert.deepEqual(named, [], `${name} is given another peer's files`);
      const sealing = Object.entries(env).filter(([, value]) => /^\/tls\/(destination-)?sealing\./.test(value ?? ""));
      const own =
        {
          render: [["SEALING_KEY", sealingKey.key]],
          webhook: [["DESTINATION_SEALING_KEY", destinationSealingKey.key]],
          gateway: [
            ["SEALING_PUBLIC_KEY", sealingKey.publicKey],
            ["DESTINATION_SEALING_PUBLIC_KEY", destinationSealingKey.publicKey],
          ],
        }[name as string] ?? [];
      assert.deepEqual(sealing, own, `${name}: only render holds its private sealing key and only webhook its own, the gateway their public keys`);
    }
  });
});

describe("up.sh's ports", () => {
  it("gives each service a fixed health and metrics port, 9461 to 9466, each overridable", () => {
    assert.deepEqual(localPorts({}).health, { gateway: 9461, identity: 9462, metering: 9463, render: 9464, storage: 9465, webhook: 9466 });
    const ports = localPorts({ RENDER_HEALTH_PORT: "19464", GATEWAY_HEALTH_PORT: "19461" });
    assert.deepEqual(ports.health, { gateway: 19461, identity: 9462, metering: 9463, render: 19464, storage: 9465, webhook: 9466 });
    assert.equal(serviceEnv("gateway", { ...stack, ports }).HEALTH_PORT, "19461");
  });
});

describe("stopping a stuck service", () => {
  it("kills a service that ignores SIGTERM after the grace period, and what it started with it", { timeout: 60_000 }, async () => {
    // A service whose event loop is stuck, with a child of its own (as render has Chromium).
    const script = `
      const { spawn } = require("node:child_process");
      process.on("SIGTERM", () => {});
      const helper = spawn("sleep", ["300"], { stdio: "ignore" });
      process.stdout.write(String(helper.pid) + "\\n", () => { for (;;) {} });
    `;
    const service = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    const helperPid = await new Promise<number>((resolve) => service.stdout!.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
    assert.ok(running(helperPid), "the service's own child runs");

    await stopService(service, 500);
    assert.equal(service.signalCode, "SIGKILL", "the stuck service was killed");
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(running(helperPid), false, "its child is gone too");
  });
});

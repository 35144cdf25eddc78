import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Client, credentials, status as GrpcStatus, type ServiceDefinition, type ServiceError } from "@grpc/grpc-js";
import { createGrpcClient, type GrpcServerHandle, type GrpcTls, peerDnsName, startGrpcServer } from "./grpc";
import { ensureGrpcCertificates } from "./grpc-certificates";
import type { GrpcRelease } from "./grpc-identity";

/**
 * A caller's identity belongs to one release (issue 39): every certificate below is signed by the
 * same CA, as a shared issuer would sign them, and only the one naming a peer of the server's own
 * release (trust domain, namespace, release) gets an answer. Real mutual TLS on loopback.
 */

const dir = mkdtempSync(path.join(tmpdir(), "pressroom-grpc-identity-"));
const ours: GrpcRelease = { trustDomain: "pressroom.internal", namespace: "prod", release: "pressroom" };
const say = {
  path: "/test.v1.Echo/Say",
  requestStream: false,
  responseStream: false,
  requestSerialize: (b: Buffer) => b,
  responseSerialize: (b: Buffer) => b,
  requestDeserialize: (b: Buffer) => b,
  responseDeserialize: (b: Buffer) => b,
} as ServiceDefinition[string];

/** Certificates of `release` for `peers`, signed by the shared CA in `dir/ours` (copied beside them). */
async function certificatesOf(name: string, release: GrpcRelease, peers: Parameters<typeof ensureGrpcCertificates>[1]) {
  const at = path.join(dir, name);
  if (name !== "ours") {
    mkdirSync(at, { recursive: true });
    for (const file of ["ca.crt", "ca.key"]) copyFileSync(path.join(dir, "ours", file), path.join(at, file));
  }
  return ensureGrpcCertificates(at, peers, release);
}

/** Calls Say with a raw client of these files that checks nothing of the server but its CA: what a stranger's own client does. */
function sayAs(port: number, files: GrpcTls, method = say.path): Promise<ServiceError | null> {
  const creds = credentials.createSsl(readFileSync(files.ca), readFileSync(files.key), readFileSync(files.cert), { checkServerIdentity: () => undefined });
  const client = new Client(`127.0.0.1:${port}`, creds, { "grpc.ssl_target_name_override": peerDnsName("storage") });
  return new Promise<ServiceError | null>((resolve) =>
    client.makeUnaryRequest(
      method,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.from("hi"),
      { deadline: Date.now() + 3_000 },
      (err) => {
        client.close();
        resolve(err);
      },
    ),
  );
}

describe("gRPC identities are bound to one release (issue 39)", () => {
  let server: GrpcServerHandle;
  let own: Awaited<ReturnType<typeof certificatesOf>>;
  before(async () => {
    own = await certificatesOf("ours", ours, ["storage", "gateway"]);
    server = await startGrpcServer({
      port: 0,
      host: "127.0.0.1",
      tls: own.storage,
      services: [
        {
          definition: { say },
          implementation: { say: (call: { request: Buffer }, done: (e: null, r: Buffer) => void) => done(null, call.request) },
          callers: { say: ["gateway"] },
        },
      ],
    });
  });
  after(async () => {
    await server?.stop(1_000);
    rmSync(dir, { recursive: true, force: true });
  });

  it("a peer of the server's release is answered", async () => {
    assert.equal(await sayAs(server.port, own.gateway), null);
    const client = createGrpcClient(Client, `127.0.0.1:${server.port}`, own.gateway, "storage");
    const answered = await new Promise<ServiceError | null>((resolve) =>
      client.makeUnaryRequest(
        say.path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from("hi"),
        { deadline: Date.now() + 3_000 },
        (err) => resolve(err),
      ),
    );
    client.close();
    assert.equal(answered, null, "createGrpcClient accepts the server of its own release");
  });

  it("the same peer's certificate of another release, another namespace or another trust domain, from the same CA, is refused", async () => {
    const others: [string, GrpcRelease][] = [
      ["another release", { ...ours, release: "staging" }],
      ["another namespace", { ...ours, namespace: "team-b" }],
      ["another trust domain", { ...ours, trustDomain: "team-b.example" }],
    ];
    for (const [name, release] of others) {
      const { gateway } = await certificatesOf(name.replaceAll(" ", "-"), release, ["gateway"]);
      const err = await sayAs(server.port, gateway);
      assert.equal(err?.code, GrpcStatus.PERMISSION_DENIED, `${name}: ${err?.details}`);
      const health = await sayAs(server.port, gateway, "/grpc.health.v1.Health/Check");
      assert.equal(health?.code, GrpcStatus.PERMISSION_DENIED, `${name}: not even the health check`);
    }
  });

  it("another team's certificate on the same CA naming the caller by DNS name only is refused", async () => {
    const at = path.join(dir, "dns-only");
    mkdirSync(at);
    const files = { ca: path.join(dir, "ours", "ca.crt"), cert: path.join(at, "gateway.crt"), key: path.join(at, "gateway.key") };
    execFileSync(
      "openssl",
      ["req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", files.key, "-out", files.cert]
        .concat(["-CA", files.ca, "-CAkey", path.join(dir, "ours", "ca.key"), "-days", "1", "-subj", "/CN=gateway.pressroom.internal"])
        .concat(["-addext", "subjectAltName=DNS:gateway.pressroom.internal", "-addext", "extendedKeyUsage=serverAuth,clientAuth"]),
      { env: { PATH: process.env.PATH }, stdio: ["ignore", "ignore", "pipe"] },
    );
    assert.equal((await sayAs(server.port, files))?.code, GrpcStatus.PERMISSION_DENIED);
    await assert.rejects(
      startGrpcServer({ port: 0, host: "127.0.0.1", tls: files, services: [] }),
      /names no peer of a release/,
      "nor does a process start with such a certificate",
    );
  });

  it("a client refuses a server presenting the right service's certificate of another release", async () => {
    const { storage } = await certificatesOf("their-storage", { ...ours, release: "staging" }, ["storage"]);
    const theirs = await startGrpcServer({ port: 0, host: "127.0.0.1", tls: storage, services: [] });
    try {
      const client = createGrpcClient(Client, `127.0.0.1:${theirs.port}`, own.gateway, "storage");
      const err = await new Promise<ServiceError | null>((resolve) =>
        client.makeUnaryRequest(
          "/grpc.health.v1.Health/Check",
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          { deadline: Date.now() + 3_000 },
          (e) => resolve(e),
        ),
      );
      client.close();
      assert.equal(err?.code, GrpcStatus.UNAVAILABLE, err?.details);
    } finally {
      await theirs.stop(1_000);
    }
  });
});

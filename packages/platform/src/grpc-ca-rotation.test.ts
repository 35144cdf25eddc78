import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { Client, credentials, type ServiceError } from "@grpc/grpc-js";
import { createGrpcClient, type GrpcPeer, type GrpcTls, LOCAL_RELEASE, peerDnsName, peerIdentity, startGrpcServer } from "./grpc";

/**
 * The chart's own CA renews without breaking peers (issue 45): cert-manager renews it with the
 * same key and subject (rotationPolicy: Never), and pods see the renewed CA when their own
 * certificate is renewed, not all at once. Real mutual TLS between a pod that still holds the
 * old CA and a certificate of it, and one that holds the renewed CA and a certificate of that,
 * works both ways; a CA renewed with a new key would not.
 */

const dir = mkdtempSync(path.join(tmpdir(), "pressroom-ca-rotation-"));
const file = (name: string) => path.join(dir, name);
const openssl = (...args: string[]) => execFileSync("openssl", args, { env: { PATH: process.env.PATH }, stdio: ["ignore", "ignore", "pipe"] });

/** A CA certificate of `key` (made when missing), with the chart's CA's one subject; each call a new serial and validity, as a renewal. */
function caCertificate(name: string, key: string, serial: number): string {
  openssl(
    "req",
    "-x509",
    "-new",
    "-key",
    file(key),
    "-out",
    file(name),
    "-subj",
    "/CN=Pressroom gRPC CA (pressroom)",
    "-days",
    String(30 * serial),
    "-set_serial",
    String(serial),
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  );
  return file(name);
}

/** A peer's certificate, as cert-manager issues it: a new key, the peer's one URI name, signed by `ca`. */
function peerFiles(peer: GrpcPeer, ca: string, caKey: string, suffix = ""): GrpcTls {
  const cert = file(`${peer}-${path.basename(ca)}${suffix}.crt`);
  const key = file(`${peer}-${path.basename(ca)}${suffix}.key`);
  openssl(
    "req",
    "-x509",
    "-new",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    key,
    "-out",
    cert,
    "-CA",
    ca,
    "-CAkey",
    file(caKey),
    "-days",
    "10",
    "-subj",
    `/CN=${peerDnsName(peer)}`,
    "-addext",
    `subjectAltName=URI:${peerIdentity(LOCAL_RELEASE, peer)}`,
    "-addext",
    "extendedKeyUsage=serverAuth,clientAuth",
  );
  return { ca, cert, key };
}

const check = (caller: Client) =>
  new Promise<ServiceError | null>((resolve) =>
    caller.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      (request: Buffer) => request,
      (response: Buffer) => response,
      Buffer.alloc(0),
      { deadline: Date.now() + 3_000 },
      (err) => resolve(err),
    ),
  );

async function healthCheck(server: GrpcTls, client: GrpcTls): Promise<ServiceError | null> {
  const handle = await startGrpcServer({ port: 0, host: "127.0.0.1", tls: server, services: [] });
  const caller = createGrpcClient(Client, `127.0.0.1:${handle.port}`, client, "identity");
  try {
    return await check(caller);
  } finally {
    caller.close();
    await handle.stop(1_000);
  }
}

after(() => rmSync(dir, { recursive: true, force: true }));

describe("the chart's CA renews without breaking peers (issue 45)", () => {
  openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file("ca.key"));
  openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file("ca-rekeyed.key"));
  const before = caCertificate("ca-before.crt", "ca.key", 1);
  const renewed = caCertificate("ca-renewed.crt", "ca.key", 2);
  const rekeyed = caCertificate("ca-rekeyed.crt", "ca-rekeyed.key", 3);

  it("a peer renewed after the CA (renewed CA, certificate of it) and one not yet (old CA, old certificate) trust each other, both ways", async () => {
    const gateway = peerFiles("gateway", before, "ca.key");
    const identity = peerFiles("identity", renewed, "ca.key");
    assert.equal(await healthCheck(identity, gateway), null, "old client → renewed server");
    const gatewayRenewed = peerFiles("gateway", renewed, "ca.key");
    const identityOld = peerFiles("identity", before, "ca.key");
    assert.equal(await healthCheck(identityOld, gatewayRenewed), null, "renewed client → old server");
  });

  it("a CA renewed with a new key would break them (the control: why the chart's CA keeps its key)", async () => {
    const gateway = peerFiles("gateway", before, "ca.key");
    const identity = peerFiles("identity", rekeyed, "ca-rekeyed.key");
    assert.notEqual(await healthCheck(identity, gateway), null);
  });
});

/**
 * A leaked key is revoked by rotating the CA, as deploy/kubernetes.md's steps do it: (1) a new CA
 * key (the CA Secret deleted), (2) every peer's certificate issued again from it, its Secret's
 * files replaced in place (ca.crt the new CA alone), (3) every pod restarted. The holder of the
 * leaked key, with a client of its own that checks nothing of the server, is refused by a
 * server that has read the new files; a connection it opened before keeps working until the
 * restart, which is why step 3 is there.
 */
describe("a leaked key is revoked by rotating the CA (issue 39, deploy/kubernetes.md)", () => {
  const leakedClient = (port: number, leaked: GrpcTls) =>
    new Client(
      `127.0.0.1:${port}`,
      credentials.createSsl(readFileSync(leaked.ca), readFileSync(leaked.key), readFileSync(leaked.cert), { rejectUnauthorized: false }),
      { "grpc.ssl_target_name_override": peerDnsName("identity") },
    );

  it("after the three steps the leaked certificate gets no connection, and the peers issued again talk", async () => {
    openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file("leak-ca.key"));
    const oldCa = caCertificate("leak-ca-old.crt", "leak-ca.key", 1);
    const leaked = peerFiles("admin", oldCa, "leak-ca.key", "-leaked");
    // identity's Secret volume: its three files, replaced in place by a renewal.
    const mounted = file("identity-secret");
    mkdirSync(mounted);
    const secret = { ca: path.join(mounted, "ca.crt"), cert: path.join(mounted, "tls.crt"), key: path.join(mounted, "tls.key"), refreshMs: 100 };
    const install = (from: GrpcTls) => {
      copyFileSync(from.ca, secret.ca);
      copyFileSync(from.cert, secret.cert);
      copyFileSync(from.key, secret.key);
    };
    install(peerFiles("identity", oldCa, "leak-ca.key", "-leak"));
    let server = await startGrpcServer({ port: 0, host: "127.0.0.1", tls: secret, services: [] });
    const opened = leakedClient(server.port, leaked);
    try {
      assert.equal(await check(opened), null, "before the rotation the leaked certificate is a peer's");

      // 1. A new CA key and certificate.
      openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file("leak-ca-new.key"));
      const newCa = caCertificate("leak-ca-new.crt", "leak-ca-new.key", 2);
      // 2. Every peer issued again from it; identity's files replaced where it reads them.
      install(peerFiles("identity", newCa, "leak-ca-new.key", "-rotated"));
      const gateway = peerFiles("gateway", newCa, "leak-ca-new.key", "-rotated");
      let answered: ServiceError | null | undefined;
      for (const until = Date.now() + 15_000; Date.now() < until && answered !== null;) answered = await healthCheckAt(server.port, gateway);
      assert.equal(answered, null, "a peer issued again is answered once identity has read its new files");

      const fresh = leakedClient(server.port, leaked);
      const refused = await check(fresh);
      fresh.close();
      assert.notEqual(refused, null, "a new connection with the leaked certificate is refused");
      assert.equal(await check(opened), null, "a connection opened before the rotation still works: step 3 is needed");

      // 3. The restart.
      await server.stop(1_000);
      server = await startGrpcServer({ port: server.port, host: "127.0.0.1", tls: secret, services: [] });
      assert.notEqual(await check(opened), null, "after the restart the leaked certificate has no connection left");
      assert.equal(await healthCheckAt(server.port, gateway), null);
    } finally {
      opened.close();
      await server.stop(1_000);
    }
  });
});

async function healthCheckAt(port: number, client: GrpcTls): Promise<ServiceError | null> {
  const caller = createGrpcClient(Client, `127.0.0.1:${port}`, client, "identity");
  try {
    return await check(caller);
  } finally {
    caller.close();
  }
}

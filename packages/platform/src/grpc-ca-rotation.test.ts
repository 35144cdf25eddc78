import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { Client, type ServiceError } from "@grpc/grpc-js";
import { createGrpcClient, type GrpcPeer, type GrpcTls, peerDnsName, startGrpcServer } from "./grpc";

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

/** A peer's certificate, as cert-manager issues it: a new key, the peer's one DNS name, signed by `ca`. */
function peerFiles(peer: GrpcPeer, ca: string, caKey: string): GrpcTls {
  const cert = file(`${peer}-${path.basename(ca)}.crt`);
  const key = file(`${peer}-${path.basename(ca)}.key`);
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
    `subjectAltName=DNS:${peerDnsName(peer)}`,
    "-addext",
    "extendedKeyUsage=serverAuth,clientAuth",
  );
  return { ca, cert, key };
}

async function healthCheck(server: GrpcTls, client: GrpcTls): Promise<ServiceError | null> {
  const handle = await startGrpcServer({ port: 0, host: "127.0.0.1", tls: server, services: [] });
  const caller = createGrpcClient(Client, `127.0.0.1:${handle.port}`, client, "identity");
  try {
    return await new Promise<ServiceError | null>((resolve) =>
      caller.makeUnaryRequest(
        "/grpc.health.v1.Health/Check",
        (request: Buffer) => request,
        (response: Buffer) => response,
        Buffer.alloc(0),
        { deadline: Date.now() + 3_000 },
        (err) => resolve(err),
      ),
    );
  } finally {
    caller.close();
    await handle.stop(1_000);
  }
}

describe("the chart's CA renews without breaking peers (issue 45)", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));
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

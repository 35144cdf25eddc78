import assert from "node:assert/strict";
import { X509Certificate, createPrivateKey } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { GRPC_PEERS, peerIdentity } from "./grpc";
import { ensureGrpcCertificates } from "./grpc-certificates";

describe("the stack's gRPC certificates", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-certs-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("makes a CA and, for every peer, a certificate it signed naming the peer, with a key only its owner reads", async () => {
    const files = await ensureGrpcCertificates(dir);
    assert.deepEqual(Object.keys(files).sort(), [...GRPC_PEERS].sort());
    const ca = new X509Certificate(readFileSync(files.admin.ca));
    assert.equal(ca.ca, true);
    for (const peer of GRPC_PEERS) {
      const cert = new X509Certificate(readFileSync(files[peer].cert));
      assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey), `${peer}'s certificate is signed by the CA`);
      assert.equal(cert.ca, false);
      assert.equal(cert.subjectAltName, `URI:spiffe://pressroom.local/ns/local/release/pressroom/service/${peer}`);
      assert.ok(cert.checkPrivateKey(createPrivateKey(readFileSync(files[peer].key))), `${peer}'s key matches its certificate`);
      assert.equal(statSync(files[peer].key).mode & 0o077, 0, `${peer}'s key is its owner's only`);
    }
  });

  it("keeps what it made: a second run changes nothing", async () => {
    const first = await ensureGrpcCertificates(dir);
    const before = GRPC_PEERS.map((peer) => readFileSync(first[peer].cert, "utf8"));
    const second = await ensureGrpcCertificates(dir);
    assert.deepEqual(
      GRPC_PEERS.map((peer) => readFileSync(second[peer].cert, "utf8")),
      before,
    );
  });

  it("makes a peer's certificate again when it names another release (an earlier checkout's, or another setting), keeping the CA", async () => {
    const first = await ensureGrpcCertificates(dir, ["gateway"]);
    const ca = readFileSync(first.gateway.ca, "utf8");
    const staging = { trustDomain: "pressroom.local", namespace: "local", release: "staging" };
    const second = await ensureGrpcCertificates(dir, ["gateway"], staging);
    assert.equal(new X509Certificate(readFileSync(second.gateway.cert)).subjectAltName, `URI:${peerIdentity(staging, "gateway")}`);
    assert.equal(readFileSync(second.gateway.ca, "utf8"), ca);
  });
});

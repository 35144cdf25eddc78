import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { PeerCertificate } from "node:tls";
import { after, describe, it } from "node:test";
import type { ServiceDefinition } from "@grpc/grpc-js";
import { peerOf, startGrpcServer } from "./grpc";
import { ensureGrpcCertificates, readPeerTls } from "./grpc-certificates";

const named = (subjectaltname: string) => ({ subjectaltname }) as PeerCertificate;

describe("gRPC peers", () => {
  it("a certificate names its peer by its one <peer>.pressroom.internal DNS name", () => {
    assert.equal(peerOf(named("DNS:gateway.pressroom.internal")), "gateway");
    assert.equal(peerOf(named("DNS:admin.pressroom.internal")), "admin");
    assert.equal(peerOf(named("DNS:gateway.pressroom.internal, DNS:admin.pressroom.internal")), undefined, "two names: none");
    assert.equal(peerOf(named("DNS:intruder.pressroom.internal")), undefined, "not a peer");
    assert.equal(peerOf(named("DNS:gateway.pressroom.internal.evil.example")), undefined);
    assert.equal(peerOf(named("URI:spiffe://pressroom/admin")), undefined);
    assert.equal(peerOf(undefined), undefined);
  });

  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-grpc-test-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("a server refuses to start with a method whose callers are not listed", async () => {
    const { storage } = await ensureGrpcCertificates(dir, ["storage"]);
    const method = { path: "/test.v1.Echo/Say", requestStream: false, responseStream: false } as ServiceDefinition[string];
    await assert.rejects(
      startGrpcServer({
        port: 0,
        host: "127.0.0.1",
        tls: readPeerTls(storage),
        services: [{ definition: { say: method, shout: { ...method, path: "/test.v1.Echo/Shout" } }, implementation: {}, callers: { say: ["gateway"] } }],
      }),
      /\/test\.v1\.Echo\/Shout has no callers listed/,
    );
  });
});

import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { PeerCertificate } from "node:tls";
import { after, describe, it } from "node:test";
import { Client, type ServiceDefinition, type ServiceError } from "@grpc/grpc-js";
import { createGrpcClient, peerIdentity, peerOf, startGrpcServer } from "./grpc";
import { ensureGrpcCertificates } from "./grpc-certificates";

const named = (subjectaltname: string) => ({ subjectaltname }) as PeerCertificate;

describe("gRPC peers", () => {
  it("a certificate names its peer by its one URI name, spiffe://<trust domain>/ns/<namespace>/release/<release>/service/<peer>", () => {
    const release = { trustDomain: "pressroom.internal", namespace: "prod", release: "pressroom" };
    const uri = (peer: string, of = release) => `URI:spiffe://${of.trustDomain}/ns/${of.namespace}/release/${of.release}/service/${peer}`;
    assert.equal(peerIdentity(release, "gateway"), "spiffe://pressroom.internal/ns/prod/release/pressroom/service/gateway");
    assert.equal(peerOf(named(uri("gateway")), release), "gateway");
    assert.equal(peerOf(named(`DNS:admin.pressroom.internal, ${uri("admin")}`), release), "admin", "DNS names beside it do not matter");
    assert.equal(peerOf(named(uri("admin", { ...release, release: "staging" })), release), undefined, "another release");
    assert.equal(peerOf(named(uri("admin", { ...release, namespace: "team-b" })), release), undefined, "another namespace");
    assert.equal(peerOf(named(uri("admin", { ...release, trustDomain: "other.example" })), release), undefined, "another trust domain");
    assert.equal(peerOf(named(`${uri("gateway")}, ${uri("admin")}`), release), undefined, "two names: none");
    assert.equal(peerOf(named(uri("intruder")), release), undefined, "not a peer");
    assert.equal(peerOf(named(`${uri("gateway")}/extra`), release), undefined);
    assert.equal(peerOf(named(`URI:"${uri("gateway").slice(4)}, URI:x"`), release), undefined, "a quoted name (Node's form for one holding a comma)");
    assert.equal(peerOf(named("DNS:gateway.pressroom.internal"), release), undefined, "a DNS name alone names no one");
    assert.equal(peerOf(undefined, release), undefined);
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
        tls: storage,
        services: [{ definition: { say: method, shout: { ...method, path: "/test.v1.Echo/Shout" } }, implementation: {}, callers: { say: ["gateway"] } }],
      }),
      /\/test\.v1\.Echo\/Shout has no callers listed/,
    );
  });

  it("a server takes a renewed certificate and CA from its files, without a restart", async () => {
    const [first, second] = [await ensureGrpcCertificates(path.join(dir, "first"), ["storage"]), await ensureGrpcCertificates(path.join(dir, "second"))];
    // The files the server is given, as a Secret volume holds them: replaced in place by a renewal.
    const served = path.join(dir, "served");
    mkdirSync(served);
    const files = { ca: path.join(served, "ca.crt"), cert: path.join(served, "tls.crt"), key: path.join(served, "tls.key") };
    const install = (from: { ca: string; cert: string; key: string }) => {
      copyFileSync(from.ca, files.ca);
      copyFileSync(from.cert, files.cert);
      copyFileSync(from.key, files.key);
    };
    install(first.storage);
    const server = await startGrpcServer({ port: 0, host: "127.0.0.1", tls: { ...files, refreshMs: 100 }, services: [] });
    const check = (client: Client) =>
      new Promise<ServiceError | null>((resolve) =>
        client.makeUnaryRequest(
          "/grpc.health.v1.Health/Check",
          (request: Buffer) => request,
          (response: Buffer) => response,
          Buffer.alloc(0),
          { deadline: Date.now() + 2_000 },
          (err) => resolve(err),
        ),
      );
    try {
      // A client of the second CA is refused while the server holds the first CA's certificate.
      const before = createGrpcClient(Client, `127.0.0.1:${server.port}`, second.gateway, "storage");
      assert.notEqual(await check(before), null);
      before.close();
      install(second.storage);
      let answered: ServiceError | null | undefined;
      for (const until = Date.now() + 15_000; Date.now() < until && answered !== null;) {
        const after = createGrpcClient(Client, `127.0.0.1:${server.port}`, second.gateway, "storage");
        answered = await check(after);
        after.close();
      }
      assert.equal(answered, null, "the server presents the second CA's certificate and trusts its clients");
    } finally {
      await server.stop(1_000);
    }
  });
});

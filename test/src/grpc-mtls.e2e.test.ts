import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { credentials, status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";
import { identityV1, meteringV1 } from "@pressroom/contracts";
import { createGrpcClient, ensureGrpcCertificates, type GrpcPeer, LOCAL_RELEASE } from "@pressroom/platform";
import { DEMO_API_KEY } from "@pressroom/domain";
import { clientsAs, startHarness, WITHOUT_RENDER, type Harness, type PeerClients } from "./test-support/harness";
import { eventually } from "./test-support/webhook-receiver";

/**
 * Every gRPC hop is mutual TLS, and each server answers each method only to
 * the callers its table names: a client without a certificate of the
 * stack's CA gets no connection; one with a certificate of another CA
 * neither; the gateway's certificate cannot mint a key, set usage or read
 * another key's webhook secret; the operator CLI's can.
 */

type Unary<Req, Res> = (request: Req, callback: (err: ServiceError | null, response: Res) => void) => unknown;

/** The raw status of a call (the platform's `call` maps errors to AppError, which hides PERMISSION_DENIED). */
function statusOf<Req, Res>(client: object, method: Unary<Req, Res>, request: Req): Promise<{ code: number; details: string; response?: Res }> {
  return new Promise((resolve) =>
    method.call(client, request, (err, response) => resolve(err ? { code: err.code, details: err.details } : { code: GrpcStatus.OK, details: "", response })),
  );
}

describe("gRPC: mutual TLS and per-method callers", () => {
  let h: Harness;
  let strangerDir: string;
  const opened: { close(): void }[] = [];
  const as = (peer: GrpcPeer): PeerClients => {
    const clients = clientsAs(h.stack, peer);
    opened.push(clients);
    return clients;
  };
  const identityAddress = () => `127.0.0.1:${h.stack.ports.grpc.identity}`;
  const createKey = (client: identityV1.IdentityServiceClient, email: string) => statusOf(client, client.createKey, { email, plan: "business" });

  before(async () => {
    h = await startHarness({ only: WITHOUT_RENDER });
    strangerDir = mkdtempSync(path.join(tmpdir(), "pressroom-stranger-ca-"));
  });

  after(async () => {
    for (const client of opened) client.close();
    await h?.stop();
    rmSync(strangerDir, { recursive: true, force: true });
  });

  it("a client without a certificate gets no connection", async () => {
    const plaintext = new identityV1.IdentityServiceClient(identityAddress(), credentials.createInsecure());
    const tlsWithoutCertificate = new identityV1.IdentityServiceClient(identityAddress(), credentials.createSsl(readFileSync(h.stack.certificates.admin.ca)), {
      "grpc.ssl_target_name_override": "identity.pressroom.internal",
    });
    opened.push(plaintext, tlsWithoutCertificate);
    for (const client of [plaintext, tlsWithoutCertificate]) {
      const result = await createKey(client, "anonymous@example.com");
      assert.equal(result.code, GrpcStatus.UNAVAILABLE, result.details);
      assert.equal(result.response, undefined);
    }
  });

  it("a certificate of another CA, even naming the operator, gets no connection", async () => {
    const stranger = await ensureGrpcCertificates(strangerDir, ["admin"]);
    const client = createGrpcClient(identityV1.IdentityServiceClient, identityAddress(), stranger.admin, "identity");
    opened.push(client);
    const result = await createKey(client, "stranger@example.com");
    assert.equal(result.code, GrpcStatus.UNAVAILABLE, result.details);
  });

  it("the operator's certificate of another release or namespace, signed by the stack's own CA, is refused (issue 39)", async () => {
    for (const [name, release] of [
      ["another-release", { ...LOCAL_RELEASE, release: "staging" }],
      ["another-namespace", { ...LOCAL_RELEASE, namespace: "team-b" }],
    ] as const) {
      const dir = path.join(strangerDir, name);
      mkdirSync(dir);
      for (const file of ["ca.crt", "ca.key"]) copyFileSync(path.join(path.dirname(h.stack.certificates.admin.ca), file), path.join(dir, file));
      const { admin } = await ensureGrpcCertificates(dir, ["admin"], release);
      // Its holder's own client, which does not check the server's name.
      const client = new identityV1.IdentityServiceClient(
        identityAddress(),
        credentials.createSsl(readFileSync(admin.ca), readFileSync(admin.key), readFileSync(admin.cert), { checkServerIdentity: () => undefined }),
        { "grpc.ssl_target_name_override": "identity.pressroom.internal" },
      );
      opened.push(client);
      const result = await createKey(client, `${name}@example.com`);
      assert.equal(result.code, GrpcStatus.PERMISSION_DENIED, `${name}: ${result.details}`);
      assert.match(result.details, /^this certificate may not call /);
    }
    // The refusal's log line reaches the stack's output a moment after the answer.
    const logged = /"identity":"spiffe:\/\/pressroom\.local\/ns\/team-b\/release\/pressroom\/service\/admin"/;
    await eventually("the refused identity in identity's log", async () => (logged.test(h.stack.output()) ? true : undefined), 5_000, 50);
  });

  it("a server whose certificate names another service is refused by the client", async () => {
    // The stack's metering presents metering's certificate: a client expecting identity there does not call it.
    const client = createGrpcClient(identityV1.IdentityServiceClient, `127.0.0.1:${h.stack.ports.grpc.metering}`, h.stack.certificates.admin, "identity");
    opened.push(client);
    const result = await createKey(client, "misdirected@example.com");
    assert.equal(result.code, GrpcStatus.UNAVAILABLE, result.details);
  });

  it("the gateway's certificate cannot mint a key, change a plan, set usage or read another key's webhook secret", async () => {
    const gateway = as("gateway");
    const { keyId } = await h.admin.createKey("free");
    const refused = [
      await createKey(gateway.identity, "gateway-minted@example.com"),
      await statusOf(gateway.identity, gateway.identity.setPlan, { apiKey: "", keyId, plan: "business", actor: "operator" }),
      await statusOf(gateway.identity, gateway.identity.revokeKey, { apiKey: "", keyId }),
      await statusOf(gateway.identity, gateway.identity.getWebhookSecret, { keyId }),
      await statusOf(gateway.metering, gateway.metering.setUsage, { keyId, plan: "free", rendersUsed: "0", actor: "operator" }),
    ];
    for (const result of refused) {
      assert.equal(result.code, GrpcStatus.PERMISSION_DENIED, result.details);
      assert.match(result.details, /^gateway may not call \/pressroom\./);
    }
    const email = await statusOf(gateway.identity, gateway.identity.getKey, { apiKey: "", keyId });
    assert.equal(email.code, GrpcStatus.PERMISSION_DENIED, "nor read a key's record");
    assert.match(h.stack.output(), /gRPC call refused: the caller may not call this method/);
  });

  it("the operator's certificate mints a key; the gateway's authenticates it and reads its own webhook secret with the key itself", async () => {
    const admin = as("admin");
    const created = await statusOf<identityV1.CreateKeyRequest, identityV1.CreateKeyResponse>(admin.identity, admin.identity.createKey, {
      email: "operator-minted@example.com",
      plan: "business",
    });
    assert.equal(created.code, GrpcStatus.OK, created.details);
    const apiKey = created.response!.apiKey;
    h.api.remember(apiKey);
    const gateway = as("gateway");
    const authenticated = await statusOf<identityV1.AuthenticateRequest, identityV1.AuthenticateResponse>(gateway.identity, gateway.identity.authenticate, {
      apiKey,
    });
    assert.equal(authenticated.response?.key?.keyId, created.response!.key!.keyId);
    const own = await statusOf<identityV1.GetOwnWebhookSecretRequest, identityV1.GetOwnWebhookSecretResponse>(
      gateway.identity,
      gateway.identity.getOwnWebhookSecret,
      { apiKey, sessionToken: "" },
    );
    assert.match(own.response?.secret ?? "", /^whsec_/);
    h.api.remember(own.response!.secret);
    const notAKey = await statusOf(gateway.identity, gateway.identity.getOwnWebhookSecret, { apiKey: "pr_live_not_a_key", sessionToken: "" });
    assert.equal(notAKey.code, GrpcStatus.UNAUTHENTICATED);
  });

  it("each service's certificate reaches only the methods it uses", async () => {
    const { keyId } = await h.admin.createKey("free");
    const webhook = as("webhook");
    const secret = await statusOf<identityV1.GetWebhookSecretRequest, identityV1.GetWebhookSecretResponse>(
      webhook.identity,
      webhook.identity.getWebhookSecret,
      {
        keyId,
      },
    );
    assert.equal(secret.code, GrpcStatus.OK, "webhook reads any key's secret, to sign its callbacks");
    h.api.remember(secret.response!.secret);
    assert.equal((await createKey(webhook.identity, "webhook-minted@example.com")).code, GrpcStatus.PERMISSION_DENIED);
    assert.equal((await statusOf(webhook.identity, webhook.identity.authenticate, { apiKey: DEMO_API_KEY })).code, GrpcStatus.PERMISSION_DENIED);

    const render = as("render");
    const admitted = await statusOf(render.metering, render.metering.admit, meteringV1.AdmitRequest.fromPartial({ keyId, plan: "free" }));
    assert.equal(admitted.code, GrpcStatus.PERMISSION_DENIED, "render does not admit");
    assert.equal((await statusOf(render.identity, render.identity.getWebhookSecret, { keyId })).code, GrpcStatus.PERMISSION_DENIED);

    const metering = as("metering");
    const plan = await statusOf(metering.identity, metering.identity.setPlan, { apiKey: "", keyId, plan: "starter", actor: "billing:local" });
    assert.equal(plan.code, GrpcStatus.OK, "metering's billing changes a plan after payment");
    assert.equal((await createKey(metering.identity, "metering-minted@example.com")).code, GrpcStatus.PERMISSION_DENIED);

    const admin = as("admin");
    const usage = await statusOf(admin.metering, admin.metering.setUsage, { keyId, plan: "starter", rendersUsed: "3", actor: "operator" });
    assert.equal(usage.code, GrpcStatus.OK, usage.details);
    assert.equal(
      (await statusOf(admin.metering, admin.metering.admit, meteringV1.AdmitRequest.fromPartial({ keyId, plan: "starter" }))).code,
      GrpcStatus.PERMISSION_DENIED,
      "the operator does not admit requests",
    );
  });

  it("grpc.health.v1 answers any peer of the stack's release", async () => {
    const render = as("render");
    const healthy = await new Promise<ServiceError | null>((resolve) =>
      render.metering.makeUnaryRequest(
        "/grpc.health.v1.Health/Check",
        (request: Buffer) => request,
        (response: Buffer) => response,
        Buffer.alloc(0),
        (err) => resolve(err),
      ),
    );
    assert.equal(healthy, null);
  });

  it("the gateway's own calls pass: a key's usage and webhook secret over HTTP", async () => {
    const { apiKey } = await h.admin.createKey("starter");
    const usage = await h.api.get("/v1/keys/usage", { key: apiKey });
    assert.equal(usage.status, 200, JSON.stringify(usage.json));
    const secret = await h.api.get("/v1/keys/webhook-secret", { key: apiKey });
    assert.equal(secret.status, 200);
    h.api.remember(secret.json.secret as string);
    const rotated = await h.api.post("/v1/keys/webhook-secret/rotate", {}, { key: apiKey });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.json));
    h.api.remember(rotated.json.secret as string);
    assert.notEqual(rotated.json.secret, secret.json.secret);
    assert.equal((await h.api.get("/v1/keys/webhook-secret", { key: apiKey })).json.secret, rotated.json.secret);
  });

  it("the stack's gRPC servers listen on loopback only", () => {
    // /proc/net/tcp: local address as little-endian hex (127.0.0.1 is 0100007F) and port, state 0A is LISTEN.
    const listening = readFileSync("/proc/net/tcp", "utf8")
      .split("\n")
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[3] === "0A")
      .map((fields) => fields[1]!.split(":") as [string, string]);
    for (const [name, port] of Object.entries(h.stack.ports.grpc)) {
      if (!(WITHOUT_RENDER as readonly string[]).includes(name)) continue;
      const addresses = listening.filter(([, hexPort]) => parseInt(hexPort, 16) === port).map(([address]) => address);
      assert.deepEqual(addresses, ["0100007F"], `${name}'s gRPC port ${port} listens on 127.0.0.1 only`);
    }
    assert.equal(readFileSync("/proc/net/tcp6", "utf8").includes(`:${h.stack.ports.grpc.identity.toString(16).toUpperCase().padStart(4, "0")} `), false);
  });
});

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { it } from "node:test";
import { identityV1, meteringV1, renderV1, storageV1, webhookV1 } from "@pressroom/contracts";
import { call, createGrpcClient, type GrpcPeer } from "@pressroom/platform";
import { startTestStack, type ServiceName, type TestStack } from "@pressroom/stack";
import { Api } from "./api";
import { OpenApiChecker } from "./openapi";

export interface PeerClients {
  identity: identityV1.IdentityServiceClient;
  metering: meteringV1.MeteringServiceClient;
  catalog: renderV1.TemplateCatalogServiceClient;
  storage: storageV1.StorageServiceClient;
  webhook: webhookV1.WebhookServiceClient;
  close(): void;
}

/** gRPC clients of the stack's five servers presenting one peer's certificate: a test calling as that service (or as the CLI, `admin`). */
export function clientsAs(stack: TestStack, peer: GrpcPeer): PeerClients {
  const tls = stack.certificates[peer];
  const { grpc } = stack.ports;
  const clients = {
    identity: createGrpcClient(identityV1.IdentityServiceClient, `127.0.0.1:${grpc.identity}`, tls, "identity"),
    metering: createGrpcClient(meteringV1.MeteringServiceClient, `127.0.0.1:${grpc.metering}`, tls, "metering"),
    catalog: createGrpcClient(renderV1.TemplateCatalogServiceClient, `127.0.0.1:${grpc.render}`, tls, "render"),
    storage: createGrpcClient(storageV1.StorageServiceClient, `127.0.0.1:${grpc.storage}`, tls, "storage"),
    webhook: createGrpcClient(webhookV1.WebhookServiceClient, `127.0.0.1:${grpc.webhook}`, tls, "webhook"),
  };
  return { ...clients, close: () => Object.values(clients).forEach((client) => client.close()) };
}

/** Operator calls straight to identity and metering over gRPC (what the admin CLI does), with the admin certificate. */
export class Admin {
  private readonly clients: PeerClients;
  readonly identity: identityV1.IdentityServiceClient;
  readonly metering: meteringV1.MeteringServiceClient;

  constructor(
    stack: TestStack,
    private readonly api: Api,
  ) {
    this.clients = clientsAs(stack, "admin");
    ({ identity: this.identity, metering: this.metering } = this.clients);
  }

  /** A new key on a plan (business by default: 1,000 requests a minute, 10 renders at once). */
  async createKey(plan = "business", email = `${plan}-${randomBytes(6).toString("hex")}@example.com`): Promise<{ apiKey: string; keyId: string }> {
    const created = await call(this.identity, this.identity.createKey, { email, plan });
    this.api.remember(created.apiKey);
    return { apiKey: created.apiKey, keyId: created.key!.keyId };
  }

  async revoke(keyId: string): Promise<void> {
    await call(this.identity, this.identity.revokeKey, { apiKey: "", keyId });
  }

  async setUsed(keyId: string, plan: string, used: number): Promise<void> {
    await call(this.metering, this.metering.setUsage, { keyId, plan, rendersUsed: String(used), actor: "test" });
  }

  close(): void {
    this.clients.close();
  }
}

export interface Harness {
  stack: TestStack;
  api: Api;
  admin: Admin;
  stop(): Promise<void>;
}

/** One stack per test file, with an HTTP client that records every exchange. */
export async function startHarness(options: Parameters<typeof startTestStack>[0] & { only?: ServiceName[] } = {}): Promise<Harness> {
  const stack = await startTestStack(options);
  const api = new Api(stack.baseUrl);
  const admin = new Admin(stack, api);
  return {
    stack,
    api,
    admin,
    async stop() {
      admin.close();
      await stack.stop();
    },
  };
}

/** Services without the render pool (no Chromium): for tests that render nothing. */
export const WITHOUT_RENDER: ServiceName[] = ["identity", "storage", "metering", "gateway"];

/**
 * The two checks every API suite ends with: each real response it saw
 * matches the OpenAPI document the gateway serves, and no key, webhook secret
 * or URL signature it saw reached any service's output.
 */
export function endOfSuiteChecks(harness: () => Harness): void {
  it("every response of this suite matches the OpenAPI document", async () => {
    const { api, stack } = harness();
    const checker = await OpenApiChecker.fetch(stack.baseUrl);
    const { problems } = checker.checkAll(api.exchanges);
    assert.ok(api.exchanges.length > 0);
    assert.deepEqual(problems, [], `${problems.length} of ${api.exchanges.length} responses differ from the OpenAPI document:\n${problems.join("\n")}`);
  });

  it("no key, webhook secret or URL signature reaches a log line", () => {
    const { api, stack } = harness();
    const logs = stack.output();
    assert.ok(logs.length > 0, "the services logged something");
    const leaked = api.secrets().filter((secret) => logs.includes(secret));
    assert.deepEqual(leaked, [], "secrets found in the services' output");
    assert.ok(!/\bpr_live_[0-9A-Za-z]{20,}/.test(logs), "no live key of any kind in the logs");
    assert.ok(!/\bwhsec_[A-Za-z0-9+/_=-]{20,}/.test(logs), "no webhook secret of any kind in the logs");
    assert.ok(!/[?&]sig=[0-9a-f]{64}/.test(logs), "no URL signature of any kind in the logs");
  });
}

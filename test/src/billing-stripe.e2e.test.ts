import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { after, before, describe, it } from "node:test";
import { accountEventsV1 } from "@pressroom/contracts";
import { streams } from "@pressroom/platform";
import { distinctFreePorts, serviceEnv, startService } from "@pressroom/stack";
import { connect, type NatsConnection } from "nats";
import Stripe from "stripe";
import { errorShape, type ApiResponse } from "./test-support/api";
import { OpenApiChecker } from "./test-support/openapi";
import { WITHOUT_RENDER, startHarness, type Harness } from "./test-support/harness";

/**
 * The Stripe provider's webhook, end to end without the network: events are
 * signed with the official SDK's test-header helper, sent to the gateway as
 * raw bytes with Stripe-Signature, verified by metering with the SDK and
 * applied once per event. (Creating a Checkout Session needs Stripe's
 * servers; its request is tested in services/metering with a fake client.)
 */

const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString("base64url")}`;
const sdk = new Stripe("sk_test_offline_pressroom");

interface CheckoutFields {
  keyId: string;
  plan: string;
  paymentStatus?: "paid" | "unpaid" | "no_payment_required";
}

function event(type: string, fields: CheckoutFields): { id: string; payload: string } {
  const id = `evt_test_${randomBytes(12).toString("hex")}`;
  const session = `cs_test_${randomBytes(12).toString("hex")}`;
  const payload = JSON.stringify(
    {
      id,
      object: "event",
      api_version: "2026-10-28.endive",
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: {
        object: {
          id: session,
          object: "checkout.session",
          mode: "payment",
          status: "complete",
          payment_status: fields.paymentStatus ?? "paid",
          amount_total: 9900,
          currency: "usd",
          client_reference_id: "chk_00000000000000000000000000",
          metadata: { key_id: fields.keyId, plan: fields.plan, session_id: "chk_00000000000000000000000000", from_plan: "free" },
        },
      },
    },
    null,
    2,
  );
  return { id, payload };
}

const sign = (payload: string, options: { secret?: string; timestamp?: number } = {}) =>
  sdk.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? WEBHOOK_SECRET, ...(options.timestamp ? { timestamp: options.timestamp } : {}) });

describe("billing with the Stripe provider: the verified webhook", () => {
  let h: Harness;
  let nc: NatsConnection;

  const deliver = (payload: string, signature: string | undefined): Promise<ApiResponse> =>
    h.api.request("POST", "/v1/billing/stripe/webhook", {
      body: payload,
      headers: {
        "content-type": "application/json; charset=utf-8",
        "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
        ...(signature === undefined ? {} : { "stripe-signature": signature }),
      },
    });

  async function planChanges(keyId: string): Promise<accountEventsV1.AccountEvent[]> {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info(streams.ACCOUNTS);
    const events: accountEventsV1.AccountEvent[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const message = await jsm.streams.getMessage(streams.ACCOUNTS, { seq }).catch(() => undefined);
      if (!message) continue;
      const decoded = accountEventsV1.AccountEvent.decode(message.data);
      if (decoded.keyId === keyId && decoded.type === "account.plan_changed" && decoded.actor === "billing:stripe") events.push(decoded);
    }
    return events;
  }

  async function planOf(apiKey: string, expected: string): Promise<string> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const plan = (await h.api.get("/v1/keys/usage", { key: apiKey })).json?.plan as string;
      if (plan === expected || Date.now() > deadline) return plan;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  before(async () => {
    h = await startHarness({
      only: WITHOUT_RENDER,
      serviceEnv: { metering: { BILLING_PROVIDER: "stripe", STRIPE_SECRET_KEY: "sk_test_offline_pressroom", STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET } },
    });
    h.api.remember(WEBHOOK_SECRET);
    nc = await connect({ servers: h.stack.natsUrl });
  });

  after(async () => {
    await nc?.close();
    await h?.stop();
  });

  it("metering runs Stripe without the development warning, and refuses to start when no provider is named", async () => {
    assert.ok(h.stack.output().includes('"provider":"stripe"'));
    assert.ok(!h.stack.output().includes("BILLING_PROVIDER=local"));
    const [grpc, health] = await distinctFreePorts(2);
    const env = serviceEnv("metering", {
      databaseUrls: h.stack.databaseUrls,
      natsUrl: h.stack.natsUrl,
      ports: { ...h.stack.ports, grpc: { ...h.stack.ports.grpc, metering: grpc! }, health: { ...h.stack.ports.health, metering: health! } },
      logDir: tmpdir(),
      certificates: h.stack.certificates,
      sealingKey: h.stack.sealingKey,
      destinationSealingKey: h.stack.destinationSealingKey,
    });
    delete env.BILLING_PROVIDER;
    const unnamed = startService("metering", { ...env, STRIPE_SECRET_KEY: "sk_test_offline_pressroom", STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET }, tmpdir());
    const code = await new Promise<number | null>((resolve) => unnamed.child.once("exit", resolve));
    assert.equal(code, 1, "a Stripe key alone does not choose the provider: metering exits");
    assert.match(unnamed.output.join(""), /BILLING_PROVIDER: required: \\"stripe\\", or \\"local\\" for development/);
  });

  it("checkout.session.completed upgrades the key once, recorded as account.plan_changed by billing:stripe", async () => {
    const { apiKey, keyId } = await h.admin.createKey("free");
    const completed = event("checkout.session.completed", { keyId, plan: "business" });
    const signature = sign(completed.payload);
    const response = await deliver(completed.payload, signature);
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.json, { received: true, outcome: "applied" });
    assert.equal(await planOf(apiKey, "business"), "business");
    const usage = await h.api.get("/v1/keys/usage", { key: apiKey });
    assert.deepEqual([usage.json.renders.limit, usage.json.rate_limit.limit, usage.json.concurrency.limit], [100_000, 1_000, 10]);

    // Stripe delivers at least once: the same event again, and in parallel, changes nothing.
    const again = await Promise.all(Array.from({ length: 5 }, () => deliver(completed.payload, signature)));
    for (const r of again) assert.deepEqual([r.status, r.json], [200, { received: true, outcome: "duplicate" }]);
    const changes = await planChanges(keyId);
    assert.equal(changes.length, 1);
    assert.deepEqual(changes[0]!.planChanged, { fromPlan: "free", toPlan: "business" });
    assert.ok(Math.abs(Date.parse(changes[0]!.time) - Date.now()) < 60_000);
  });

  it("parallel first deliveries of one event apply it exactly once", async () => {
    const { keyId } = await h.admin.createKey("free");
    const completed = event("checkout.session.completed", { keyId, plan: "starter" });
    const signature = sign(completed.payload);
    const responses = await Promise.all(Array.from({ length: 6 }, () => deliver(completed.payload, signature)));
    assert.deepEqual(
      responses.map((r) => r.status),
      [200, 200, 200, 200, 200, 200],
    );
    assert.deepEqual(responses.map((r) => r.json.outcome).sort(), ["applied", "duplicate", "duplicate", "duplicate", "duplicate", "duplicate"]);
    assert.equal((await planChanges(keyId)).length, 1);
  });

  it("a delayed payment waits for checkout.session.async_payment_succeeded", async () => {
    const { apiKey, keyId } = await h.admin.createKey("starter");
    const pending = event("checkout.session.completed", { keyId, plan: "pro", paymentStatus: "unpaid" });
    assert.deepEqual((await deliver(pending.payload, sign(pending.payload))).json, { received: true, outcome: "awaiting_payment" });
    assert.equal((await planChanges(keyId)).length, 0);
    const paid = event("checkout.session.async_payment_succeeded", { keyId, plan: "pro" });
    assert.deepEqual((await deliver(paid.payload, sign(paid.payload))).json, { received: true, outcome: "applied" });
    assert.equal(await planOf(apiKey, "pro"), "pro");
  });

  it("a payment for a plan the key already has changes nothing; other event types are acknowledged and ignored", async () => {
    const { apiKey, keyId } = await h.admin.createKey("business");
    const late = event("checkout.session.completed", { keyId, plan: "pro" });
    assert.deepEqual((await deliver(late.payload, sign(late.payload))).json, { received: true, outcome: "not_an_upgrade" });
    const other = event("payment_intent.succeeded", { keyId, plan: "pro" });
    assert.deepEqual((await deliver(other.payload, sign(other.payload))).json, { received: true, outcome: "ignored" });
    assert.equal((await h.api.get("/v1/keys/usage", { key: apiKey })).json.plan, "business");
    assert.equal((await planChanges(keyId)).length, 0);
  });

  it("refuses what Stripe did not sign: 422 PAYLOAD_INVALID in the three-field shape, and nothing changes", async () => {
    const { apiKey, keyId } = await h.admin.createKey("free");
    const completed = event("checkout.session.completed", { keyId, plan: "business" });
    const now = Math.floor(Date.now() / 1000);
    const forged: [string, string, string | undefined][] = [
      ["no signature", completed.payload, undefined],
      ["another secret", completed.payload, sign(completed.payload, { secret: "whsec_not_the_endpoint_secret" })],
      ["an altered body", completed.payload.replace('"business"', '"pro"'), sign(completed.payload)],
      ["a re-serialised body", JSON.stringify(JSON.parse(completed.payload)), sign(completed.payload)],
      ["a signature older than 300 s", completed.payload, sign(completed.payload, { timestamp: now - 301 })],
      ["a malformed header", completed.payload, "v1=deadbeef"],
    ];
    for (const [why, payload, signature] of forged) {
      const response = await deliver(payload, signature);
      assert.equal(response.status, 422, `${why}: ${response.text}`);
      assert.equal(errorShape(response).code, "PAYLOAD_INVALID", why);
    }
    assert.equal((await h.api.get("/v1/keys/usage", { key: apiKey })).json.plan, "free");
    assert.equal((await planChanges(keyId)).length, 0);
    // The refused deliveries were not recorded: the genuine one still applies.
    assert.equal((await deliver(completed.payload, sign(completed.payload))).json.outcome, "applied");
  });

  it("every response matches the OpenAPI document, and no secret reaches a log line", async () => {
    const checker = await OpenApiChecker.fetch(h.stack.baseUrl);
    assert.deepEqual(checker.checkAll(h.api.exchanges).problems, []);
    const logs = h.stack.output();
    assert.deepEqual(
      h.api.secrets().filter((secret) => logs.includes(secret)),
      [],
    );
    assert.ok(!logs.includes(WEBHOOK_SECRET) && !logs.includes("sk_test_offline_pressroom"));
  });
});

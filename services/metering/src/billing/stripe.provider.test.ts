import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Stripe from "stripe";
import { StripeProvider, type StripeClient } from "./stripe.provider";

/**
 * The Stripe provider without the network: the Checkout Session request is
 * checked on a fake of Stripe's API client (the one fake Pressroom allows:
 * Stripe's servers cannot be reached offline); webhook verification uses the
 * real SDK and signatures made by its own test-header helper.
 */

const WEBHOOK_SECRET = "whsec_test_pressroom_0123456789abcdef";
const sdk = new Stripe("sk_test_offline_not_used");

function fakeStripeClient(): { client: StripeClient; calls: { params: Stripe.Checkout.SessionCreateParams; options?: Stripe.RequestOptions }[] } {
  const calls: { params: Stripe.Checkout.SessionCreateParams; options?: Stripe.RequestOptions }[] = [];
  return {
    calls,
    client: {
      checkout: {
        sessions: {
          create(params, options) {
            calls.push({ params, options });
            return Promise.resolve({ id: "cs_test_a1b2c3", url: "https://checkout.stripe.com/c/pay/cs_test_a1b2c3" });
          },
        },
      },
      webhooks: sdk.webhooks,
    },
  };
}

describe("the Stripe payment provider", () => {
  it("creates a one-time Checkout Session for the plan's price, with key_id and plan in the metadata", async () => {
    const fake = fakeStripeClient();
    const provider = new StripeProvider(fake.client, { publicBaseUrl: "https://pressroom.example.com/", webhookSecret: WEBHOOK_SECRET });
    const sessionId = "chk_0mz8k3q1ab2cd3ef4gh5ij6k7l";
    const before = Math.floor(Date.now() / 1000);
    const created = await provider.createSession({
      sessionId,
      keyId: "key_abc",
      plan: "pro",
      fromPlan: "starter",
      expiresAt: new Date(Date.now() + 2 * 3600_000),
    });
    assert.deepEqual(created, { checkoutUrl: "https://checkout.stripe.com/c/pay/cs_test_a1b2c3", providerSessionId: "cs_test_a1b2c3" });

    assert.equal(fake.calls.length, 1);
    const { params, options } = fake.calls[0]!;
    assert.deepEqual(options, { idempotencyKey: sessionId }, "a retried create cannot make a second session");
    assert.equal(params.mode, "payment");
    assert.equal(params.client_reference_id, sessionId);
    assert.deepEqual(params.metadata, { key_id: "key_abc", plan: "pro", session_id: sessionId, from_plan: "starter" });
    assert.deepEqual(params.payment_intent_data?.metadata, params.metadata);
    assert.equal(params.line_items?.length, 1);
    const item = params.line_items![0]!;
    assert.equal(item.quantity, 1);
    assert.equal(item.price_data?.currency, "usd");
    assert.equal(item.price_data?.unit_amount, 2900, "29 USD in cents");
    assert.equal(item.price_data?.product_data?.name, "Pressroom Pro plan");
    assert.match(item.price_data?.product_data?.description ?? "", /10,000 renders a month, 300 requests a minute, 5 renders at a time/);
    assert.equal(params.success_url, `https://pressroom.example.com/v1/billing/checkout/${sessionId}`);
    assert.equal(params.cancel_url, params.success_url);
    assert.ok(params.expires_at! >= before + 2 * 3600 - 5 && params.expires_at! <= before + 2 * 3600 + 5);
  });

  it("keeps expires_at inside Stripe's 30 minutes to 24 hours", () => {
    const provider = new StripeProvider(fakeStripeClient().client, { publicBaseUrl: "http://localhost:8080", webhookSecret: WEBHOOK_SECRET });
    const now = 1_800_000_000_000;
    const request = { sessionId: "chk_0mz8k3q1ab2cd3ef4gh5ij6k7l", keyId: "key_abc", plan: "business" as const, fromPlan: "free" as const };
    const lifetime = (seconds: number) => provider.sessionParams({ ...request, expiresAt: new Date(now + seconds * 1000) }, now).expires_at! - now / 1000;
    assert.equal(lifetime(60), 31 * 60);
    assert.equal(lifetime(3 * 86400), 86400 - 60);
    assert.equal(provider.sessionParams({ ...request, expiresAt: new Date(now + 3600_000) }, now).line_items![0]!.price_data!.unit_amount, 9900);
  });

  it("refuses a session without a url", async () => {
    const client: StripeClient = { checkout: { sessions: { create: () => Promise.resolve({ id: "cs_x", url: null }) } }, webhooks: sdk.webhooks };
    const provider = new StripeProvider(client, { publicBaseUrl: "http://localhost:8080", webhookSecret: WEBHOOK_SECRET });
    await assert.rejects(
      provider.createSession({ sessionId: "chk_0mz8k3q1ab2cd3ef4gh5ij6k7l", keyId: "k", plan: "pro", fromPlan: "free", expiresAt: new Date() }),
    );
  });

  it("verifies Stripe-Signature over the exact raw body with the SDK", () => {
    const provider = new StripeProvider(fakeStripeClient().client, { publicBaseUrl: "http://localhost:8080", webhookSecret: WEBHOOK_SECRET });
    const payload = JSON.stringify(
      { id: "evt_test_1", object: "event", type: "checkout.session.completed", data: { object: { id: "cs_test_1", object: "checkout.session" } } },
      null,
      2,
    );
    const header = sdk.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
    const event = provider.verifyWebhook(Buffer.from(payload), header);
    assert.equal(event.id, "evt_test_1");
    assert.equal(event.type, "checkout.session.completed");

    // Re-serialised, altered, signed with another secret, or too old: all refused.
    assert.throws(() => provider.verifyWebhook(Buffer.from(JSON.stringify(JSON.parse(payload))), header));
    assert.throws(() => provider.verifyWebhook(Buffer.from(payload.replace("cs_test_1", "cs_test_2")), header));
    assert.throws(() => provider.verifyWebhook(Buffer.from(payload), sdk.webhooks.generateTestHeaderString({ payload, secret: "whsec_other" })));
    const old = sdk.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Math.floor(Date.now() / 1000) - 301 });
    assert.throws(() => provider.verifyWebhook(Buffer.from(payload), old));
    assert.throws(() => provider.verifyWebhook(Buffer.from(payload), "t=1,v1=nothex"));
    assert.equal(provider.canVerifyWebhooks, true);
    assert.equal(new StripeProvider(fakeStripeClient().client, { publicBaseUrl: "http://x", webhookSecret: "" }).canVerifyWebhooks, false);
  });
});

import { PLANS } from "@pressroom/domain";
import Stripe from "stripe";
import { checkoutPageUrl, type CheckoutRequest, type PaymentProvider, type ProviderSession } from "./provider";

/**
 * The part of the official Stripe client this provider uses. The real one is
 * `new Stripe(secretKey)`; tests pass a fake object of this shape, since the
 * Checkout Session API cannot be reached offline.
 */
export interface StripeClient {
  checkout: {
    sessions: { create(params: Stripe.Checkout.SessionCreateParams, options?: Stripe.RequestOptions): Promise<Pick<Stripe.Checkout.Session, "id" | "url">> };
  };
  webhooks: { constructEvent(payload: string | Uint8Array, header: string, secret: string, tolerance?: number): Stripe.Event };
}

export function createStripeClient(secretKey: string): StripeClient {
  // Bounded so that a retry still fits the gateway's 15 s deadline for CreateCheckout.
  return new Stripe(secretKey, { maxNetworkRetries: 1, timeout: 6_000, appInfo: { name: "Pressroom" } });
}

/** Stripe allows a Checkout Session to live between 30 minutes and 24 hours. */
const MIN_SESSION_SECONDS = 30 * 60 + 60;
const MAX_SESSION_SECONDS = 24 * 60 * 60 - 60;

/**
 * Stripe Checkout: a one-time payment of the plan's price (price_data, no
 * catalog objects to keep in sync), carrying key_id, plan and Pressroom's
 * session id in the metadata. The plan changes when Stripe's signed
 * checkout.session.completed webhook arrives (see BillingService).
 */
export class StripeProvider implements PaymentProvider {
  readonly name = "stripe" as const;

  constructor(
    private readonly stripe: StripeClient,
    private readonly options: { publicBaseUrl: string; webhookSecret: string },
  ) {}

  /** The request for Stripe's POST /v1/checkout/sessions, built without calling anything. */
  sessionParams(request: CheckoutRequest, now = Date.now()): Stripe.Checkout.SessionCreateParams {
    const plan = PLANS[request.plan];
    const pageUrl = checkoutPageUrl(this.options.publicBaseUrl, request.sessionId);
    const lifetime = Math.min(MAX_SESSION_SECONDS, Math.max(MIN_SESSION_SECONDS, Math.round((request.expiresAt.getTime() - now) / 1000)));
    const metadata = { key_id: request.keyId, plan: request.plan, session_id: request.sessionId, from_plan: request.fromPlan };
    return {
      mode: "payment",
      client_reference_id: request.sessionId,
      line_items: [
        {
          quantity: 1,
          price_data: {
            currency: "usd",
            unit_amount: plan.priceUsd * 100,
            product_data: {
              name: `Pressroom ${plan.name} plan`,
              description: `${plan.rendersPerMonth.toLocaleString("en-US")} renders a month, ${plan.requestsPerMinute.toLocaleString("en-US")} requests a minute, ${plan.concurrentRenders} renders at a time.`,
            },
          },
        },
      ],
      metadata,
      payment_intent_data: { metadata },
      success_url: pageUrl,
      cancel_url: pageUrl,
      expires_at: Math.floor(now / 1000) + lifetime,
    };
  }

  async createSession(request: CheckoutRequest): Promise<ProviderSession> {
    const session = await this.stripe.checkout.sessions.create(this.sessionParams(request), { idempotencyKey: request.sessionId });
    if (!session.url) throw new Error("Stripe answered a Checkout Session without a url");
    return { checkoutUrl: session.url, providerSessionId: session.id };
  }

  /** Verifies Stripe-Signature over the exact raw body; throws when it does not verify (or is older than 300 s). */
  verifyWebhook(payload: Uint8Array, signature: string): Stripe.Event {
    return this.stripe.webhooks.constructEvent(Buffer.from(payload), signature, this.options.webhookSecret);
  }

  get canVerifyWebhooks(): boolean {
    return this.options.webhookSecret.length > 0;
  }
}

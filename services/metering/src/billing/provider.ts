import type { PlanId } from "@pressroom/domain";

/** What a provider needs to start a checkout for one upgrade. */
export interface CheckoutRequest {
  /** Pressroom's own session id (chk_…), also the idempotency key at the provider. */
  sessionId: string;
  keyId: string;
  plan: PlanId;
  fromPlan: PlanId;
  expiresAt: Date;
}

export interface ProviderSession {
  /** Where the customer goes to pay (or, for the local provider, to confirm). */
  checkoutUrl: string;
  /** The provider's own id of the session; empty for the local provider. */
  providerSessionId: string;
}

/**
 * A payment provider, chosen by BILLING_PROVIDER (no default). `local`, for
 * development only, is Pressroom's own checkout page, whose confirm step
 * upgrades at once; `stripe` is a Stripe Checkout Session, completed by
 * Stripe's verified checkout.session.completed webhook.
 */
export interface PaymentProvider {
  readonly name: "local" | "stripe";
  createSession(request: CheckoutRequest): Promise<ProviderSession>;
}

/** The page on the gateway that shows a session: the local checkout page, and Stripe's return page. */
export function checkoutPageUrl(publicBaseUrl: string, sessionId: string): string {
  return `${publicBaseUrl.replace(/\/+$/, "")}/v1/billing/checkout/${sessionId}`;
}

import { checkoutPageUrl, type CheckoutRequest, type PaymentProvider, type ProviderSession } from "./provider";

/**
 * The development provider (BILLING_PROVIDER=local): no payment service at
 * all. The checkout URL is Pressroom's own page (served by the gateway),
 * whose Confirm button upgrades the key at once, without payment.
 */
export class LocalProvider implements PaymentProvider {
  readonly name = "local" as const;

  constructor(private readonly publicBaseUrl: string) {}

  createSession(request: CheckoutRequest): Promise<ProviderSession> {
    return Promise.resolve({ checkoutUrl: checkoutPageUrl(this.publicBaseUrl, request.sessionId), providerSessionId: "" });
  }
}

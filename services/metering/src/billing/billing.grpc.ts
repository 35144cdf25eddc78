import type { meteringV1 } from "@pressroom/contracts";
import { unary, type Logger } from "@pressroom/platform";
import type { BillingService } from "./billing.service";

type BillingHandlers = Pick<meteringV1.MeteringServiceServer, "createCheckout" | "getCheckoutSession" | "confirmCheckout" | "handleStripeWebhook">;

/** Checkout and the Stripe webhook: the MeteringService methods that are billing's. */
export function billingHandlers(billing: BillingService, logger: Logger): BillingHandlers {
  return {
    createCheckout: unary((req: meteringV1.CreateCheckoutRequest) => billing.createCheckout({ keyId: req.keyId, plan: req.plan }), logger),
    getCheckoutSession: unary((req: meteringV1.GetCheckoutSessionRequest) => billing.getSession(req.sessionId), logger),
    confirmCheckout: unary((req: meteringV1.ConfirmCheckoutRequest) => billing.confirm(req.sessionId, req.confirmToken), logger),
    handleStripeWebhook: unary((req: meteringV1.HandleStripeWebhookRequest) => billing.handleStripeWebhook(req.payload, req.signature), logger),
  };
}

import type { Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { MeteringDb } from "../db";
import { BillingService } from "./billing.service";
import type { KeyDirectory } from "./identity-client";
import { LocalProvider } from "./local.provider";
import { StripeProvider, createStripeClient } from "./stripe.provider";

export interface BillingOptions {
  db: Kysely<MeteringDb>;
  logger: Logger;
  keys: KeyDirectory;
  provider: "local" | "stripe";
  stripeSecretKey: string;
  stripeWebhookSecret: string;
  publicBaseUrl: string;
  sessionTtlSeconds: number;
}

/** Billing with the configured payment provider; says at start which one, loudly when it is the local one. */
export function createBilling(options: BillingOptions): BillingService {
  const { logger, publicBaseUrl } = options;
  const stripe =
    options.provider === "stripe"
      ? new StripeProvider(createStripeClient(options.stripeSecretKey), { publicBaseUrl, webhookSecret: options.stripeWebhookSecret })
      : undefined;
  if (stripe) logger.info({ provider: "stripe", stripeWebhooks: stripe.canVerifyWebhooks }, "billing configured");
  else {
    logger.warn(
      { provider: "local" },
      "BILLING_PROVIDER=local: FOR DEVELOPMENT ONLY. Checkouts upgrade keys WITHOUT ANY PAYMENT. " +
        "Set BILLING_PROVIDER=stripe (with STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET) in production.",
    );
  }
  return new BillingService({
    db: options.db,
    logger,
    provider: stripe ?? new LocalProvider(publicBaseUrl),
    stripe,
    keys: options.keys,
    sessionTtlSeconds: options.sessionTtlSeconds,
  });
}

import type { Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { Config } from "../config";
import type { MeteringDb } from "../db";
import { BillingService } from "./billing.service";
import type { KeyDirectory } from "./identity-client";
import { LocalProvider } from "./local.provider";
import { StripeProvider, createStripeClient } from "./stripe.provider";

export interface BillingOptions {
  db: Kysely<MeteringDb>;
  logger: Logger;
  keys: KeyDirectory;
  config: Pick<Config, "BILLING_PROVIDER" | "STRIPE_SECRET_KEY" | "STRIPE_WEBHOOK_SECRET" | "PUBLIC_BASE_URL" | "CHECKOUT_TTL_SECONDS">;
}

/** Billing with the configured payment provider; says at start which one, loudly when it is the local one. */
export function createBilling(options: BillingOptions): BillingService {
  const { logger, config } = options;
  const publicBaseUrl = config.PUBLIC_BASE_URL;
  const stripe =
    config.BILLING_PROVIDER === "stripe"
      ? new StripeProvider(createStripeClient(config.STRIPE_SECRET_KEY), { publicBaseUrl, webhookSecret: config.STRIPE_WEBHOOK_SECRET })
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
    sessionTtlSeconds: config.CHECKOUT_TTL_SECONDS,
  });
}

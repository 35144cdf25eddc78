import { DEFAULT_PUBLIC_BASE_URL, env, grpcServiceShape, jobBoundsShape, loadConfig, z } from "@pressroom/platform";

export const configSchema = z
  .object({
    ...grpcServiceShape("metering"),
    IDENTITY_ADDR: env.grpcAddr("identity"),
    /** A concurrency slot whose job never finishes is reclaimed after this long (renewed while its job is queued or rendering). */
    SLOT_LEASE_SECONDS: env.int(15 * 60, 10),
    /**
     * A template preview's slot, released by the gateway when the preview ends, is reclaimed after this long when
     * it never was (the gateway died); longer than the gateway waits for a preview (60 s). Never renewed.
     */
    PREVIEW_LEASE_SECONDS: env.int(120, 10),
    PUBLIC_BASE_URL: z.url().default(DEFAULT_PUBLIC_BASE_URL),
    /** Postgres connections of this replica: each admission holds one for about a millisecond. */
    DATABASE_POOL_MAX: env.int(20, 1),
    /** How long a checkout session can be confirmed or paid. */
    CHECKOUT_TTL_SECONDS: env.int(2 * 60 * 60, 60),
    /**
     * The payment provider, always explicit: "stripe" (Checkout Sessions) or
     * "local" (development only: its confirm step upgrades a key without payment).
     */
    BILLING_PROVIDER: z.enum(["local", "stripe"], { error: 'required: "stripe", or "local" for development (upgrades without payment)' }),
    /** Stripe's API key; required with BILLING_PROVIDER=stripe. */
    STRIPE_SECRET_KEY: z.string().default(""),
    /** Verifies Stripe-Signature on POST /v1/billing/stripe/webhook (whsec_…). */
    STRIPE_WEBHOOK_SECRET: z.string().default(""),
    /**
     * Render's RENDER_DEADLINE_MS and RENDER_MAX_QUEUE_WAIT_MS (the same values): a job not ended by its
     * admission plus both plus a margin is overdue, its slot no longer renewed and render asked to end it.
     */
    ...jobBoundsShape,
    /** How often a replica renews the leases of queued jobs and sweeps old rate events, expired leases and old idempotency records. */
    SWEEP_INTERVAL_MS: env.int(60_000, 1_000),
    /** How often a replica looks for batch items waiting for a free slot (an item's end kicks its key at once; this catches the rest). */
    BATCH_DISPATCH_INTERVAL_MS: env.int(1_000, 100),
  })
  .superRefine((config, ctx) => {
    // Only the sweep renews the lease of a queued or rendering job: it must come round before half a lease has passed.
    if (config.SWEEP_INTERVAL_MS * 2 >= config.SLOT_LEASE_SECONDS * 1000) {
      ctx.addIssue({
        code: "custom",
        path: ["SWEEP_INTERVAL_MS"],
        message: `must be under half of SLOT_LEASE_SECONDS (${config.SLOT_LEASE_SECONDS * 500} ms), or running jobs lose their slots`,
      });
    }
    if (config.BILLING_PROVIDER !== "stripe") return;
    if (!config.STRIPE_SECRET_KEY) ctx.addIssue({ code: "custom", path: ["STRIPE_SECRET_KEY"], message: "required when BILLING_PROVIDER is stripe" });
    // A Stripe checkout only completes through its webhook: one without the other could take payments and never upgrade.
    if (!config.STRIPE_WEBHOOK_SECRET) {
      ctx.addIssue({
        code: "custom",
        path: ["STRIPE_WEBHOOK_SECRET"],
        message: "required when BILLING_PROVIDER is stripe (the endpoint's whsec_… signing secret)",
      });
    }
  });

export type Config = z.infer<typeof configSchema>;

export const loadMeteringConfig = (source: NodeJS.ProcessEnv = process.env): Readonly<Config> => loadConfig(configSchema, source);

const DAY = 86_400;
/** The shortest an output may be asked to live (options.output_ttl_seconds). */
export const MIN_OUTPUT_TTL_SECONDS = 60;

/**
 * The plans of the spec's section 8: the one place they are defined. `templates`: how many own templates a key may store;
 * `previewsPerMonth`: template previews it may render a month (at save, and for a preview.png that finds none stored),
 * three times its renders, and none for the public demo key (which stores no template); `testRendersPerDay`: test-mode
 * renders and images (`"test": true`, stamped TEST) it may make a UTC day, never counted against its renders.
 * `maxOutputTtlSeconds`: the longest a request may ask its output to live (options.output_ttl_seconds): a day on the
 * demo and free plans (the default lifetime), 3 days on Starter, 7 days on Pro and Business, never past the platform's
 * MAX_OUTPUT_TTL_SECONDS (the output bucket keeps objects that long; plans.test.ts checks it). No imports: the console's
 * browser bundle reads this file.
 */
export const PLANS = {
  demo: {
    name: "Demo",
    rendersPerMonth: 50,
    requestsPerMinute: 3,
    concurrentRenders: 1,
    templates: 0,
    previewsPerMonth: 0,
    testRendersPerDay: 10,
    maxOutputTtlSeconds: DAY,
    priceUsd: 0,
    public: true,
  },
  free: {
    name: "Free",
    rendersPerMonth: 100,
    requestsPerMinute: 10,
    concurrentRenders: 1,
    templates: 3,
    previewsPerMonth: 300,
    testRendersPerDay: 20,
    maxOutputTtlSeconds: DAY,
    priceUsd: 0,
    public: false,
  },
  starter: {
    name: "Starter",
    rendersPerMonth: 1_000,
    requestsPerMinute: 60,
    concurrentRenders: 2,
    templates: 20,
    previewsPerMonth: 3_000,
    testRendersPerDay: 50,
    maxOutputTtlSeconds: 3 * DAY,
    priceUsd: 9,
    public: false,
  },
  pro: {
    name: "Pro",
    rendersPerMonth: 10_000,
    requestsPerMinute: 300,
    concurrentRenders: 5,
    templates: 100,
    previewsPerMonth: 30_000,
    testRendersPerDay: 200,
    maxOutputTtlSeconds: 7 * DAY,
    priceUsd: 29,
    public: false,
  },
  business: {
    name: "Business",
    rendersPerMonth: 100_000,
    requestsPerMinute: 1_000,
    concurrentRenders: 10,
    templates: 1_000,
    previewsPerMonth: 300_000,
    testRendersPerDay: 1_000,
    maxOutputTtlSeconds: 7 * DAY,
    priceUsd: 99,
    public: false,
  },
} as const;

export type PlanId = keyof typeof PLANS;
export type Plan = (typeof PLANS)[PlanId];

export const PLAN_ORDER: readonly PlanId[] = ["demo", "free", "starter", "pro", "business"];

/** The plans a key can buy (a checkout upgrades to one of them). */
export const PAID_PLANS: readonly PlanId[] = PLAN_ORDER.filter((id) => PLANS[id].priceUsd > 0);

export function isPlanId(value: string): value is PlanId {
  return Object.hasOwn(PLANS, value);
}

export function planOf(id: string): Plan {
  if (!isPlanId(id)) throw new Error(`unknown plan "${id}"`);
  return PLANS[id];
}

/** The public demo key, printed in the README. It has the demo plan. */
export const DEMO_API_KEY = "pr_demo_public_try_pressroom_2026";
/** The demo key's id: everyone holds it, so what it would change for everyone (its webhook secret, its revocation) is refused. */
export const DEMO_KEY_ID = "key_demo";

import { AppError } from "@pressroom/platform";
import { PAID_PLANS, PLAN_ORDER, isPlanId, type PlanId } from "@pressroom/domain";

const rank = (plan: string): number => PLAN_ORDER.indexOf(plan as PlanId);

export function isUpgrade(from: string, to: string): boolean {
  return isPlanId(from) && isPlanId(to) && rank(to) > rank(from);
}

/**
 * Why a key on `from` cannot buy `to`, or undefined when it can. Checkout
 * only upgrades: the same plan or a lower one is refused, and the demo plan
 * (the public demo key) cannot be upgraded at all: it is shared by everyone.
 */
export function upgradeProblem(from: string, to: string): AppError | undefined {
  if (!isPlanId(to) || !PAID_PLANS.includes(to)) {
    return new AppError("PLAN_INVALID", `plan "${to}" cannot be bought`, `Choose a paid plan: ${PAID_PLANS.join(", ")}.`);
  }
  if (from === "demo") {
    return new AppError(
      "PLAN_INVALID",
      "the public demo key cannot be upgraded",
      "Get your own key with POST /v1/signup (free plan), then upgrade that key with POST /v1/billing/checkout.",
    );
  }
  if (!isPlanId(from)) return new AppError("PLAN_INVALID", `the key's plan "${from}" is unknown`, "Contact support.");
  const higher = PAID_PLANS.filter((id) => rank(id) > rank(from));
  const choose = higher.length ? `Choose a higher plan: ${higher.join(", ")}.` : "Your key is already on the highest plan; contact support for more.";
  if (to === from) return new AppError("PLAN_INVALID", `plan: your key is already on the ${to} plan`, choose);
  if (rank(to) < rank(from)) {
    const downgrade = `plan: ${to} would be a downgrade from your ${from} plan; checkout only upgrades`;
    return new AppError("PLAN_INVALID", downgrade, `${choose} To downgrade, contact support.`);
  }
  return undefined;
}

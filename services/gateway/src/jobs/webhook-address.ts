import { NetGuardError, resolvePublicAll, type AppError } from "@pressroom/platform";
import { errors } from "../errors";

/** How long the look-up of a webhook_url's host may take at the request; past it the request goes on (delivery checks again). */
export const WEBHOOK_LOOKUP_BUDGET_MS = 2_000;

const HINT =
  "Give a webhook_url whose host is public: the webhook service delivers only to public addresses (to receive webhooks on your machine, see npm run webhooks:listen in the README).";

/**
 * A webhook_url the webhook service would refuse to deliver to, as far as the request can know it: its host is a private,
 * loopback, link-local or otherwise non-public address, or a name that resolves to one (the delivery refuses a name any of
 * whose addresses is not public). 422 naming webhook_url and why. A name that does not resolve now, or not within
 * WEBHOOK_LOOKUP_BUDGET_MS, is not refused: DNS can change before the delivery, which checks every attempt again.
 * `allowLoopback` follows the webhook service's WEBHOOK_ALLOW_LOOPBACK (development and tests only).
 */
export async function webhookAddressProblem(webhookUrl: string, allowLoopback: boolean): Promise<AppError | undefined> {
  const host = new URL(webhookUrl).hostname;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), WEBHOOK_LOOKUP_BUDGET_MS);
  });
  try {
    await Promise.race([resolvePublicAll(host, { allowLoopback, label: "host" }), late]);
    return undefined;
  } catch (err) {
    if (err instanceof NetGuardError) return errors.payload(`webhook_url: ${err.message}; webhooks are delivered to public addresses only`, HINT);
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

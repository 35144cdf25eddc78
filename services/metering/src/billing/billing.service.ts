import { meteringV1 } from "@pressroom/contracts";
import { AppError, newId, type Logger } from "@pressroom/platform";
import { isPlanId, type PlanId } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type Stripe from "stripe";
import type { MeteringDb } from "../db";
import * as sessions from "./checkout.repository";
import type { KeyDirectory } from "./identity-client";
import { isUpgrade, upgradeProblem } from "./plans";
import type { PaymentProvider } from "./provider";
import type { StripeProvider } from "./stripe.provider";

export interface BillingDeps {
  db: Kysely<MeteringDb>;
  logger: Logger;
  provider: PaymentProvider;
  /** Set when the Stripe provider is configured: verifies and applies its webhooks. */
  stripe?: StripeProvider;
  keys: KeyDirectory;
  sessionTtlSeconds: number;
}

const SESSION_ID = /^chk_[0-9a-z]{26}$/;

/** The Stripe events that complete a checkout (the second one for delayed payment methods). */
const COMPLETING_EVENTS = new Set(["checkout.session.completed", "checkout.session.async_payment_succeeded"]);

const notFound = () =>
  new AppError("NOT_FOUND", "checkout session not found", "Start a checkout with POST /v1/billing/checkout and open the checkout_url it answers.");
const expired = () => new AppError("URL_EXPIRED", "this checkout session has expired", "Start a new checkout with POST /v1/billing/checkout.");

function toSession(row: sessions.SessionRow): meteringV1.CheckoutSession {
  return {
    sessionId: row.session_id,
    provider: row.provider,
    status: row.status,
    plan: row.plan,
    fromPlan: row.from_plan,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? "",
    checkoutUrl: row.checkout_url,
  };
}

const isExpired = (row: sessions.SessionRow) => row.status === "open" && row.expires_at.getTime() <= Date.now();

/**
 * Upgrades through a payment provider. Every plan change goes through
 * identity's SetPlan with the provider as the actor, so it is recorded as an
 * account.plan_changed event (who, from, to, when).
 */
export class BillingService {
  constructor(private readonly deps: BillingDeps) {}

  async createCheckout(request: { keyId: string; plan: string }): Promise<meteringV1.CreateCheckoutResponse> {
    const { deps } = this;
    // The key's plan as identity has it now (the gateway's may be a cached one).
    const key = await deps.keys.getKey(request.keyId);
    if (key.revoked) throw new AppError("AUTH_INVALID", "API key revoked", "Use an active key.");
    const problem = upgradeProblem(key.plan, request.plan);
    if (problem) throw problem;
    const plan = request.plan as PlanId;
    const sessionId = newId("chk");
    const expiresAt = new Date(Date.now() + deps.sessionTtlSeconds * 1000);
    let created;
    try {
      created = await deps.provider.createSession({ sessionId, keyId: request.keyId, plan, fromPlan: key.plan as PlanId, expiresAt });
    } catch (err) {
      const e = err as { type?: string; statusCode?: number; code?: string };
      deps.logger.error(
        { provider: deps.provider.name, errType: e.type, statusCode: e.statusCode, errCode: e.code },
        "the payment provider refused or did not answer",
      );
      throw new AppError("UNAVAILABLE", "the payment provider is unavailable", "Retry with exponential backoff.");
    }
    await sessions.insertSession(deps.db, {
      session_id: sessionId,
      key_id: request.keyId,
      provider: deps.provider.name,
      plan,
      from_plan: key.plan,
      checkout_url: created.checkoutUrl,
      provider_session_id: created.providerSessionId || null,
      expires_at: expiresAt,
    });
    deps.logger.info({ keyId: request.keyId, provider: deps.provider.name, plan, fromPlan: key.plan }, "checkout started");
    return { checkoutUrl: created.checkoutUrl, sessionId, plan };
  }

  /** What the checkout page shows; an open local session gets a fresh one-time confirm token. */
  async getSession(sessionId: string): Promise<meteringV1.GetCheckoutSessionResponse> {
    if (!SESSION_ID.test(sessionId)) throw notFound();
    const row = await sessions.findSession(this.deps.db, sessionId);
    if (!row) throw notFound();
    if (isExpired(row)) throw expired();
    const confirmToken = row.status === "open" && row.provider === "local" ? await sessions.issueConfirmToken(this.deps.db, sessionId) : "";
    return { session: toSession(row), confirmToken };
  }

  /**
   * The local provider's confirm step: upgrades the key at once. The session
   * row stays locked while identity is asked, so a double submit waits and
   * then finds the session completed (and changes nothing).
   */
  async confirm(sessionId: string, token: string): Promise<meteringV1.ConfirmCheckoutResponse> {
    if (!SESSION_ID.test(sessionId)) throw notFound();
    const { deps } = this;
    return deps.db.transaction().execute(async (trx) => {
      const row = await sessions.findSession(trx, sessionId, { forUpdate: true });
      if (!row) throw notFound();
      if (row.provider !== "local") {
        throw new AppError(
          "PAYLOAD_INVALID",
          "this checkout is paid with Stripe, not confirmed here",
          "Open the checkout_url to pay; the plan changes when Stripe confirms the payment.",
        );
      }
      if (row.status === "completed") return { session: toSession(row) };
      if (isExpired(row)) throw expired();
      if (!sessions.tokenMatches(row, token)) {
        throw new AppError(
          "PAYLOAD_INVALID",
          "the confirmation is stale or did not come from the checkout page",
          "Reload the checkout page and press Confirm again.",
        );
      }
      const key = await deps.keys.getKey(row.key_id);
      if (key.revoked) throw new AppError("PLAN_INVALID", "this key has been revoked", "Upgrade an active key.");
      const problem = upgradeProblem(key.plan, row.plan);
      if (problem) throw problem;
      await deps.keys.setPlan(row.key_id, row.plan, "billing:local");
      const completed = await sessions.completeSession(trx, sessionId);
      deps.logger.info({ keyId: row.key_id, from: key.plan, to: row.plan, actor: "billing:local" }, "plan upgraded");
      return { session: toSession(completed) };
    });
  }

  /**
   * A Stripe webhook: verified with the SDK over the exact raw body, then
   * applied once per event id (recorded in the same transaction as the
   * session's completion; a failure rolls both back and Stripe retries).
   */
  async handleStripeWebhook(payload: Uint8Array, signature: string): Promise<meteringV1.HandleStripeWebhookResponse> {
    const { deps } = this;
    const stripe = deps.stripe;
    if (!stripe?.canVerifyWebhooks) {
      throw new AppError(
        "NOT_FOUND",
        "Stripe webhooks are not configured on this server",
        "Set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET on the metering service.",
      );
    }
    if (!signature) throw new AppError("PAYLOAD_INVALID", "Stripe-Signature header is missing", "Send the webhook exactly as Stripe signed it.");
    let event: Stripe.Event;
    try {
      event = stripe.verifyWebhook(payload, signature);
    } catch {
      throw new AppError(
        "PAYLOAD_INVALID",
        "Stripe-Signature does not verify (wrong secret, altered body, or older than 300 s)",
        "Send the webhook exactly as Stripe signed it, within 5 minutes.",
      );
    }
    const answer = (outcome: string) => ({ eventId: event.id, eventType: event.type, outcome });
    if (!COMPLETING_EVENTS.has(event.type)) return answer("ignored");

    return deps.db.transaction().execute(async (trx) => {
      if (!(await sessions.recordStripeEvent(trx, event, "processing"))) return answer("duplicate");
      const outcome = await this.applyStripeCheckout(trx, event.data.object as Stripe.Checkout.Session);
      await sessions.setStripeEventOutcome(trx, event.id, outcome);
      deps.logger.info({ eventId: event.id, eventType: event.type, outcome }, "Stripe webhook handled");
      return answer(outcome);
    });
  }

  private async applyStripeCheckout(trx: Kysely<MeteringDb>, session: Stripe.Checkout.Session): Promise<string> {
    const { deps } = this;
    if (session.payment_status !== "paid" && session.payment_status !== "no_payment_required") return "awaiting_payment";
    const keyId = session.metadata?.key_id ?? "";
    const plan = session.metadata?.plan ?? "";
    if (!keyId || !isPlanId(plan)) {
      deps.logger.warn({ stripeSession: session.id }, "a completed Stripe checkout without Pressroom metadata; ignored");
      return "ignored";
    }
    const row = await sessions.findByProviderSession(trx, session.id, session.client_reference_id ?? session.metadata?.session_id ?? "", { forUpdate: true });
    if (row && (row.key_id !== keyId || row.plan !== plan)) {
      deps.logger.error({ stripeSession: session.id }, "a Stripe checkout whose metadata does not match its session; ignored");
      return "ignored";
    }
    const key = await deps.keys.getKey(keyId);
    let outcome = "applied";
    if (isUpgrade(key.plan, plan)) {
      await deps.keys.setPlan(keyId, plan, "billing:stripe");
      deps.logger.info({ keyId, from: key.plan, to: plan, actor: "billing:stripe" }, "plan upgraded");
    } else {
      // Paid for a plan the key already has (or exceeds): nothing to change; support refunds by hand.
      deps.logger.warn({ keyId, plan, current: key.plan, stripeSession: session.id }, "a paid checkout that is not an upgrade any more");
      outcome = "not_an_upgrade";
    }
    if (row && row.status === "open") await sessions.completeSession(trx, row.session_id);
    return outcome;
  }
}

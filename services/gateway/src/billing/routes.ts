import type { meteringV1 } from "@pressroom/contracts";
import { AppError, call, type Logger, type z } from "@pressroom/platform";
import type { Context } from "koa";
import type { Authenticator } from "../access/auth";
import { admit, throwIfRateLimited } from "../access/admission";
import { awaitRecorded, idempotencyOf, recordResponse, replayOf, sendRecorded, throwIfKeyReused } from "../access/idempotency";
import { bodyProblem, readJsonObject } from "../body";
import { errors } from "../errors";
import { CHECKOUT_HINTS, CheckoutRequest, CheckoutSession, SESSION_ID, StripeWebhookReceived } from "./api";
import { checkoutPage, sendPage } from "./checkout-page";

/**
 * Billing on the public API:
 *
 * - POST /v1/billing/checkout {"plan"} (keyed) starts an upgrade with the
 *   configured payment provider and answers 201 {checkout_url, session_id, plan}.
 * - GET /v1/billing/checkout/<session_id> is the checkout page (HTML): the
 *   local provider's confirm page, or the page Stripe returns the customer to.
 * - POST /v1/billing/checkout/<session_id> is the page's Confirm form
 *   (local provider): upgrades the key at once, then 303 back to the page.
 * - POST /v1/billing/stripe/webhook takes Stripe's webhook; the raw body and
 *   Stripe-Signature go to metering, which verifies them with the Stripe SDK.
 *
 * The session id in the URL is the capability to see the page; the Confirm
 * form also needs the one-time token metering issued for this page view
 * (synchroniser token), and a cross-site Origin or Sec-Fetch-Site is refused.
 */

const FORM_MAX_BYTES = 4 * 1024;
const WEBHOOK_MAX_BYTES = 1024 * 1024;

const sessionNotFound = () =>
  new AppError("NOT_FOUND", "checkout session not found", "Start a checkout with POST /v1/billing/checkout and open the checkout_url it answers.");

/** What billing uses: the key, and metering, which holds the checkouts and the idempotency records. */
export interface BillingDeps {
  auth: Authenticator;
  metering: meteringV1.MeteringServiceClient;
  logger: Logger;
}

export function billingRoutes(deps: BillingDeps) {
  const { metering } = deps;
  return {
    /** POST /v1/billing/checkout {"plan"} */
    async checkout(ctx: Context) {
      const principal = await deps.auth.authenticate(ctx);
      // A failure is answered after the rate limit (the spec's check order).
      const checked = await checkoutRequest(ctx).catch((problem: unknown) => ({ problem }));
      const decision = await admit(ctx, metering, principal, "", "problem" in checked ? undefined : checked.idempotency);
      throwIfRateLimited(decision, principal.plan);
      if ("problem" in checked) throw checked.problem;
      const { plan, idempotency } = checked;
      throwIfKeyReused(decision);
      const replay = replayOf(decision);
      if (replay && idempotency) return sendRecorded(ctx, await awaitRecorded(deps, principal, idempotency.key, replay));
      const run = async () => {
        const session = await call(metering, metering.createCheckout, { keyId: principal.keyId, currentPlan: principal.plan, plan }, 15_000);
        ctx.status = 201;
        ctx.set("Cache-Control", "no-store");
        ctx.body = {
          checkout_url: session.checkoutUrl,
          session_id: session.sessionId,
          plan: CheckoutSession.shape.plan.parse(session.plan),
        } satisfies z.input<typeof CheckoutSession>;
        return { final: true };
      };
      if (idempotency) await recordResponse(deps, ctx, principal, idempotency.key, run);
      else await run();
    },

    /** GET /v1/billing/checkout/<session_id>: the checkout page. */
    async checkoutPage(ctx: Context) {
      const sessionId = ctx.params.id as string;
      if (!SESSION_ID.test(sessionId)) throw sessionNotFound();
      const { session, confirmToken } = await call(metering, metering.getCheckoutSession, { sessionId });
      if (!session) throw errors.internal();
      sendPage(ctx, checkoutPage(session, confirmToken));
    },

    /** POST /v1/billing/checkout/<session_id>: the Confirm form of the local provider. */
    async confirm(ctx: Context) {
      const sessionId = ctx.params.id as string;
      if (!SESSION_ID.test(sessionId)) throw sessionNotFound();
      refuseCrossSite(ctx);
      const form = await readForm(ctx);
      await call(metering, metering.confirmCheckout, { sessionId, confirmToken: form.get("token") ?? "" }, 15_000);
      // Post/redirect/get: the page now shows the completed upgrade, and a reload does not post again.
      ctx.status = 303;
      ctx.set("Cache-Control", "no-store");
      ctx.redirect(`/v1/billing/checkout/${sessionId}`);
    },

    /** POST /v1/billing/stripe/webhook: verified and applied by metering. */
    async stripeWebhook(ctx: Context) {
      const payload = await readRaw(ctx, WEBHOOK_MAX_BYTES);
      const result = await call(metering, metering.handleStripeWebhook, { payload, signature: ctx.get("stripe-signature") }, 15_000);
      ctx.set("Cache-Control", "no-store");
      ctx.body = { received: true, outcome: StripeWebhookReceived.shape.outcome.parse(result.outcome) } satisfies z.input<typeof StripeWebhookReceived>;
    },
  };
}

/** Reads and checks {"plan"} of POST /v1/billing/checkout, and its Idempotency-Key. */
async function checkoutRequest(ctx: Context): Promise<{ plan: string; idempotency?: meteringV1.Idempotency }> {
  const body = await readJsonObject(ctx, 16 * 1024);
  const idempotency = idempotencyOf(ctx, body);
  if (idempotency instanceof AppError) throw idempotency;
  const parsed = CheckoutRequest.safeParse(body);
  if (!parsed.success) throw bodyProblem(CheckoutRequest, body, parsed.error, CHECKOUT_HINTS);
  return { plan: parsed.data.plan, idempotency };
}

/**
 * A form post must come from our own page: a browser says where it posts
 * from (Sec-Fetch-Site, Origin), and a cross-site one is refused before the
 * token is even looked at.
 */
function refuseCrossSite(ctx: Context): void {
  const site = ctx.get("sec-fetch-site");
  const origin = ctx.get("origin");
  let sameHost = true;
  if (origin) {
    try {
      sameHost = new URL(origin).host === ctx.host;
    } catch {
      sameHost = false;
    }
  }
  if ((site && site !== "same-origin" && site !== "none") || !sameHost) {
    throw errors.payload("the confirmation did not come from the checkout page", "Open the checkout_url in your browser and press Confirm there.");
  }
}

async function readRaw(ctx: Context, maxBytes: number): Promise<Buffer> {
  if (Number(ctx.get("content-length") || "0") > maxBytes) throw errors.payload(`request body is larger than ${maxBytes} bytes`, "Send a smaller body.");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      ctx.set("Connection", "close");
      throw errors.payload(`request body is larger than ${maxBytes} bytes`, "Send a smaller body.");
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (ctx.request.type !== "application/x-www-form-urlencoded") {
    throw errors.payload(
      "the confirmation must be the checkout page's form (application/x-www-form-urlencoded)",
      "Open the checkout_url in your browser and press Confirm there.",
    );
  }
  return new URLSearchParams((await readRaw(ctx, FORM_MAX_BYTES)).toString("utf8"));
}

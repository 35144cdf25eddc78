import { z } from "@pressroom/platform";
import { PAID_PLANS, PLANS, type PlanId } from "@pressroom/domain";
import type { ZodOpenApiOperationObject } from "zod-openapi";
import {
  IDEMPOTENCY_DESCRIPTION,
  IdempotencyKey,
  KEYED,
  REPLAYABLE_HEADERS,
  errorResponse,
  forbidden,
  headers,
  internal,
  jsonResponse,
  keyedErrors,
} from "../api-shared";

/** The schemas of billing/ (the JSON checkout, the checkout page, its Confirm form and Stripe's webhook) and their operations. */

export const SESSION_ID = /^chk_[0-9a-z]{26}$/;

const plans = `must be one of ${PAID_PLANS.join(", ")}`;
const PRICES = PAID_PLANS.map((id) => `${id} $${PLANS[id].priceUsd}`).join(", ");
export const PaidPlan = z.enum(PAID_PLANS as [PlanId, ...PlanId[]], { error: plans }).meta({ id: "PaidPlan" });

export const CheckoutRequest = z.strictObject({ plan: PaidPlan }).meta({ id: "CheckoutRequest" });
export const CHECKOUT_HINTS = { plan: { required: `Choose a paid plan: ${PAID_PLANS.join(", ")}.`, invalid: `Choose a paid plan: ${PAID_PLANS.join(", ")}.` } };

export const CheckoutSession = z.strictObject({ checkout_url: z.url(), session_id: z.string().min(1), plan: PaidPlan }).meta({ id: "CheckoutSession" });

export const StripeWebhookReceived = z.strictObject({
  received: z.literal(true),
  outcome: z.enum(["applied", "duplicate", "ignored", "awaiting_payment", "not_an_upgrade"]),
});

const SessionId = z.string().regex(SESSION_ID).meta({ description: "The session_id answered by POST /v1/billing/checkout." });

const pageHeaders = z.object({
  "Request-Id": headers.requestId,
  "Cache-Control": headers.cacheControl,
  "Referrer-Policy": z.literal("same-origin").meta({ description: "same-origin: the page's URL is never sent to another site." }),
  "Content-Security-Policy": z.string().meta({ description: "No script; only the page's own stylesheet; forms post to this origin." }),
});
const html = { "text/html": { schema: z.string() } };

export const checkoutOperation: ZodOpenApiOperationObject = {
  operationId: "createCheckout",
  summary: "Start an upgrade of the calling key's plan",
  description:
    "Answers a checkout URL; opening it and paying upgrades the key's plan. " +
    `Prices, in US dollars, each one payment (not a subscription: nothing renews or is charged again, and the plan stays until it is changed): ${PRICES}. ` +
    "The plan's monthly limits apply from the upgrade on." +
    IDEMPOTENCY_DESCRIPTION.replace(" (sync) or gets the same 202 (async)", ""),
  tags: ["Account"],
  security: KEYED,
  parameters: [IdempotencyKey],
  requestBody: { required: true, content: { "application/json": { schema: CheckoutRequest } } },
  responses: {
    "201": jsonResponse("A checkout session.", CheckoutSession, REPLAYABLE_HEADERS),
    "403": forbidden(),
    "422": errorResponse(
      "The body failed validation (PAYLOAD_INVALID), the plan is not an upgrade of the key's plan (PLAN_INVALID), " +
        "or the Idempotency-Key was used with another body (IDEMPOTENCY_KEY_REUSED).",
      ["PAYLOAD_INVALID", "PLAN_INVALID", "IDEMPOTENCY_KEY_REUSED"],
      REPLAYABLE_HEADERS,
    ),
    ...keyedErrors,
  },
};

export const checkoutPageOperation: ZodOpenApiOperationObject = {
  operationId: "getCheckoutPage",
  summary: "The checkout page of a session (HTML)",
  description:
    "Opened in a browser from checkout_url. With the local provider it shows the plan, its limits and price and a Confirm button; " +
    "once confirmed (or, with Stripe, paid) it shows the completed upgrade. " +
    "No key needed: the session id is the capability, so treat checkout_url like a password.",
  tags: ["Account"],
  security: [],
  requestParams: { path: z.object({ id: SessionId }) },
  responses: {
    "200": { description: "The page.", headers: pageHeaders, content: html },
    "404": errorResponse("No such checkout session.", ["NOT_FOUND"]),
    "410": errorResponse("The session expired before it was confirmed or paid; start a new checkout.", ["URL_EXPIRED"]),
    "500": internal,
  },
};

export const confirmOperation: ZodOpenApiOperationObject = {
  operationId: "confirmCheckout",
  summary: "Confirm a local checkout (the page's form)",
  description:
    "The Confirm button of the local provider's page: upgrades the key's plan at once " +
    "(recorded as an account.plan_changed event with actor billing:local) and redirects back to the page, which then shows the completed upgrade. " +
    "Needs the one-time token of the page view; a cross-site post is refused. Confirming a completed session again changes nothing.",
  tags: ["Account"],
  security: [],
  requestParams: { path: z.object({ id: SessionId }) },
  requestBody: {
    required: true,
    content: {
      "application/x-www-form-urlencoded": {
        schema: z.looseObject({ token: z.string().meta({ description: "The one-time token in the page's form." }) }),
      },
    },
  },
  responses: {
    "303": {
      description: "Confirmed: see the page again.",
      headers: z.object({
        "Request-Id": headers.requestId,
        Location: z
          .string()
          .regex(/^\/v1\/billing\/checkout\/chk_[0-9a-z]{26}$/)
          .meta({ description: "The checkout page." }),
      }),
      content: { ...html, "text/plain": { schema: z.string() } },
    },
    "404": errorResponse("No such checkout session.", ["NOT_FOUND"]),
    "410": errorResponse("The session expired before it was confirmed.", ["URL_EXPIRED"]),
    "422": errorResponse(
      "PAYLOAD_INVALID: not the page's form (content type, missing or stale token, cross-site post), or a Stripe session. " +
        "PLAN_INVALID: the key is no longer below this plan.",
      ["PAYLOAD_INVALID", "PLAN_INVALID"],
    ),
    "500": internal,
  },
};

export const stripeWebhookOperation: ZodOpenApiOperationObject = {
  operationId: "stripeWebhook",
  summary: "Stripe's webhook endpoint",
  description:
    "For Stripe only. The raw body and Stripe-Signature are verified with Stripe's SDK (the endpoint's signing secret, 300 s tolerance); " +
    "checkout.session.completed (and checkout.session.async_payment_succeeded) upgrade the key once per event, " +
    "recorded as account.plan_changed with actor billing:stripe. Other events are acknowledged and ignored.",
  tags: ["Account"],
  security: [],
  requestParams: { header: z.object({ "Stripe-Signature": z.string() }) },
  requestBody: { required: true, content: { "application/json": { schema: z.looseObject({}) } } },
  responses: {
    "200": {
      description: "Received (applied, a duplicate, or ignored).",
      headers: z.object({ "Request-Id": headers.requestId }),
      content: { "application/json": { schema: StripeWebhookReceived } },
    },
    "404": errorResponse("Stripe webhooks are not configured on this server.", ["NOT_FOUND"]),
    "422": errorResponse("The body or Stripe-Signature does not verify (wrong secret, altered body, older than 300 s), or the body is too large.", [
      "PAYLOAD_INVALID",
    ]),
    "500": internal,
  },
};

import { IDEMPOTENCY_DESCRIPTION, REPLAYABLE_HEADERS, errorResponse, header, internal, jsonResponse, rateLimited, ref, unauthorized } from "../openapi/shared";

/**
 * The OpenAPI fragment of billing/: the JSON checkout, the checkout page, its
 * Confirm form and Stripe's webhook, and their schemas.
 */

const sessionParameter = {
  name: "id",
  in: "path",
  required: true,
  description: "The session_id answered by POST /v1/billing/checkout.",
  schema: { type: "string", pattern: "^chk_[0-9a-z]{26}$" },
};
const pageHeaders = {
  "Request-Id": header("Request-Id"),
  "Cache-Control": header("Cache-Control"),
  "Referrer-Policy": {
    description: "same-origin: the page's URL is never sent to another site.",
    required: true,
    schema: { type: "string", const: "same-origin" },
  },
  "Content-Security-Policy": {
    description: "No script; only the page's own stylesheet; forms post to this origin.",
    required: true,
    schema: { type: "string" },
  },
};

export const billingOpenApiPaths = {
  "/v1/billing/checkout": {
    post: {
      operationId: "createCheckout",
      summary: "Start an upgrade of the calling key's plan",
      description:
        "Answers a checkout URL; opening it and paying upgrades the key's plan." + IDEMPOTENCY_DESCRIPTION.replace(" (sync) or gets the same 202 (async)", ""),
      tags: ["Account"],
      security: [{ bearerAuth: [] }],
      parameters: [{ $ref: "#/components/parameters/IdempotencyKey" }],
      requestBody: { required: true, content: { "application/json": { schema: ref("CheckoutRequest") } } },
      responses: {
        "201": jsonResponse("A checkout session.", ref("CheckoutSession"), REPLAYABLE_HEADERS),
        "401": unauthorized,
        "422": errorResponse(
          "The body failed validation (PAYLOAD_INVALID), the plan is not an upgrade of the key's plan (PLAN_INVALID), " +
            "or the Idempotency-Key was used with another body (IDEMPOTENCY_KEY_REUSED).",
          ["PAYLOAD_INVALID", "PLAN_INVALID", "IDEMPOTENCY_KEY_REUSED"],
          REPLAYABLE_HEADERS,
        ),
        "429": rateLimited,
        "500": internal,
      },
    },
  },
  "/v1/billing/checkout/{id}": {
    get: {
      operationId: "getCheckoutPage",
      summary: "The checkout page of a session (HTML)",
      description:
        "Opened in a browser from checkout_url. With the local provider it shows the plan, its limits and price and a Confirm button; " +
        "once confirmed (or, with Stripe, paid) it shows the completed upgrade. " +
        "No key needed: the session id is the capability, so treat checkout_url like a password.",
      tags: ["Account"],
      security: [],
      parameters: [sessionParameter],
      responses: {
        "200": { description: "The page.", headers: pageHeaders, content: { "text/html": { schema: { type: "string" } } } },
        "404": errorResponse("No such checkout session.", ["NOT_FOUND"]),
        "410": errorResponse("The session expired before it was confirmed or paid; start a new checkout.", ["URL_EXPIRED"]),
        "500": internal,
      },
    },
    post: {
      operationId: "confirmCheckout",
      summary: "Confirm a local checkout (the page's form)",
      description:
        "The Confirm button of the local provider's page: upgrades the key's plan at once " +
        "(recorded as an account.plan_changed event with actor billing:local) and redirects back to the page, which then shows the completed upgrade. " +
        "Needs the one-time token of the page view; a cross-site post is refused. Confirming a completed session again changes nothing.",
      tags: ["Account"],
      security: [],
      parameters: [sessionParameter],
      requestBody: {
        required: true,
        content: {
          "application/x-www-form-urlencoded": {
            schema: {
              type: "object",
              required: ["token"],
              properties: { token: { type: "string", description: "The one-time token in the page's form." } },
            },
          },
        },
      },
      responses: {
        "303": {
          description: "Confirmed: see the page again.",
          headers: {
            "Request-Id": header("Request-Id"),
            Location: {
              description: "The checkout page.",
              required: true,
              schema: { type: "string", pattern: "^/v1/billing/checkout/chk_[0-9a-z]{26}$" },
            },
          },
          content: { "text/html": { schema: { type: "string" } }, "text/plain": { schema: { type: "string" } } },
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
    },
  },
  "/v1/billing/stripe/webhook": {
    post: {
      operationId: "stripeWebhook",
      summary: "Stripe's webhook endpoint",
      description:
        "For Stripe only. The raw body and Stripe-Signature are verified with Stripe's SDK (the endpoint's signing secret, 300 s tolerance); " +
        "checkout.session.completed (and checkout.session.async_payment_succeeded) upgrade the key once per event, " +
        "recorded as account.plan_changed with actor billing:stripe. Other events are acknowledged and ignored.",
      tags: ["Account"],
      security: [],
      parameters: [{ name: "Stripe-Signature", in: "header", required: true, schema: { type: "string" } }],
      requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
      responses: {
        "200": {
          description: "Received (applied, a duplicate, or ignored).",
          headers: { "Request-Id": header("Request-Id") },
          content: {
            "application/json": {
              schema: {
                type: "object",
                additionalProperties: false,
                required: ["received", "outcome"],
                properties: {
                  received: { const: true },
                  outcome: { enum: ["applied", "duplicate", "ignored", "awaiting_payment", "not_an_upgrade"] },
                },
              },
            },
          },
        },
        "404": errorResponse("Stripe webhooks are not configured on this server.", ["NOT_FOUND"]),
        "422": errorResponse("The body or Stripe-Signature does not verify (wrong secret, altered body, older than 300 s), or the body is too large.", [
          "PAYLOAD_INVALID",
        ]),
        "500": internal,
      },
    },
  },
};

export const billingOpenApiSchemas = {
  PaidPlan: { enum: ["starter", "pro", "business"] },
  CheckoutRequest: {
    type: "object",
    additionalProperties: false,
    required: ["plan"],
    properties: { plan: ref("PaidPlan") },
  },
  CheckoutSession: {
    type: "object",
    additionalProperties: false,
    required: ["checkout_url", "session_id", "plan"],
    properties: { checkout_url: { type: "string", format: "uri" }, session_id: { type: "string", minLength: 1 }, plan: ref("PaidPlan") },
  },
};

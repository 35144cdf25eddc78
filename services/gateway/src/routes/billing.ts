import { createHash } from "node:crypto";
import type { meteringV1 } from "@pressroom/contracts";
import { AppError, PLAN_ORDER, PLANS, call, isPlanId, type PlanId } from "@pressroom/platform";
import type { Context } from "koa";
import { admit, throwIfRateLimited } from "../access/admission";
import type { GatewayDeps } from "../deps";
import { onlyFields, readJsonObject } from "../http/body";
import { errors } from "../http/errors";
import { escapeHtml } from "../http/html";
import { awaitRecorded, idempotencyOf, recordResponse, replayOf, sendRecorded, throwIfKeyReused } from "../access/idempotency";

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

/** The plans a checkout can buy. */
const PAID_PLANS: readonly string[] = PLAN_ORDER.filter((id) => PLANS[id].priceUsd > 0);
const SESSION_ID = /^chk_[0-9a-z]{26}$/;
const FORM_MAX_BYTES = 4 * 1024;
const WEBHOOK_MAX_BYTES = 1024 * 1024;

const sessionNotFound = () => new AppError("NOT_FOUND", "checkout session not found", "Start a checkout with POST /v1/billing/checkout and open the checkout_url it answers.");

export function billingRoutes(deps: GatewayDeps) {
  const { metering } = deps.clients;
  return {
    /** POST /v1/billing/checkout {"plan"} */
    async checkout(ctx: Context) {
      const principal = await deps.auth.authenticate(ctx);
      // A failure is answered after the rate limit (the spec's check order).
      const checked = await checkoutRequest(ctx).catch((problem: unknown) => ({ problem }));
      const decision = await admit(ctx, metering, principal, "", "problem" in checked ? undefined : checked.idempotency);
      throwIfRateLimited(decision);
      if ("problem" in checked) throw checked.problem;
      const { plan, idempotency } = checked;
      throwIfKeyReused(decision);
      const replay = replayOf(decision);
      if (replay && idempotency) return sendRecorded(ctx, await awaitRecorded(deps, principal, idempotency.key, replay));
      const run = async () => {
        const session = await call(metering, metering.createCheckout, { keyId: principal.keyId, currentPlan: principal.plan, plan }, 15_000);
        ctx.status = 201;
        ctx.set("Cache-Control", "no-store");
        ctx.body = { checkout_url: session.checkoutUrl, session_id: session.sessionId, plan: session.plan };
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
      ctx.body = { received: true, outcome: result.outcome };
    },
  };
}

/** Reads and checks {"plan"} of POST /v1/billing/checkout, and its Idempotency-Key. */
async function checkoutRequest(ctx: Context): Promise<{ plan: string; idempotency?: meteringV1.Idempotency }> {
  const body = await readJsonObject(ctx, 16 * 1024);
  const idempotency = idempotencyOf(ctx, body);
  if (idempotency instanceof AppError) throw idempotency;
  onlyFields(body, ["plan"]);
  if (typeof body.plan !== "string" || !isPlanId(body.plan) || !PAID_PLANS.includes(body.plan)) {
    throw errors.payload(`plan: must be one of ${PAID_PLANS.join(", ")}`, `Choose a paid plan: ${PAID_PLANS.join(", ")}.`);
  }
  return { plan: body.plan, idempotency };
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
    throw errors.payload("the confirmation must be the checkout page's form (application/x-www-form-urlencoded)", "Open the checkout_url in your browser and press Confirm there.");
  }
  return new URLSearchParams((await readRaw(ctx, FORM_MAX_BYTES)).toString("utf8"));
}

// ---------------------------------------------------------------------------
// The pages: static HTML, no script at all, one inline stylesheet allowed by
// its hash in the Content-Security-Policy.

const STYLE = `
:root{color-scheme:light;--ink:#16181d;--muted:#5d6370;--line:#e4e6eb;--accent:#2f5bea;--accent-ink:#fff;--ok:#13795b;--bg:#f4f5f8}
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:32px 16px;background:var(--bg);color:var(--ink);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
.card{width:100%;max-width:520px;background:#fff;border:1px solid var(--line);border-radius:16px;box-shadow:0 12px 32px rgba(22,24,29,.08);padding:32px}
.top{display:flex;align-items:center;justify-content:space-between;margin-bottom:28px}
.brand{display:flex;align-items:center;gap:8px;font-weight:700;letter-spacing:-.01em}
.brand svg{width:22px;height:22px}
.badge{font-size:12px;color:var(--muted);border:1px solid var(--line);border-radius:999px;padding:2px 10px}
.eyebrow{margin:0;color:var(--muted);font-size:13px;text-transform:uppercase;letter-spacing:.08em}
h1{margin:4px 0 8px;font-size:28px;letter-spacing:-.02em}
.price{display:flex;align-items:baseline;gap:6px;margin:0 0 24px}
.amount{font-size:40px;font-weight:700;letter-spacing:-.03em}
.per{color:var(--muted)}
table{width:100%;border-collapse:collapse;margin:0 0 24px;font-size:15px}
th,td{padding:10px 0;border-bottom:1px solid var(--line);text-align:right}
th:first-child,td:first-child{text-align:left;font-weight:400;color:var(--muted)}
thead th{font-size:13px;color:var(--muted);font-weight:600}
td.new,th.new{font-weight:700;color:var(--ink)}
button,.button{display:block;width:100%;padding:14px 18px;border:0;border-radius:10px;background:var(--accent);color:var(--accent-ink);font-family:inherit;font-size:16px;font-weight:600;line-height:1.2;text-align:center;text-decoration:none;cursor:pointer}
button:hover,.button:hover{filter:brightness(1.08)}
button:focus-visible,.button:focus-visible{outline:3px solid #9db2ff;outline-offset:2px}
.note{margin:16px 0 0;color:var(--muted);font-size:14px}
.note+table{margin-top:16px}
.meta{margin:20px 0 0;padding-top:16px;border-top:1px solid var(--line);color:var(--muted);font-size:12px;word-break:break-all}
.done{display:flex;align-items:center;gap:10px;color:var(--ok);font-weight:600;margin:0 0 8px}
.done svg{width:22px;height:22px}
code{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--bg);padding:1px 5px;border-radius:4px}
`;
const STYLE_HASH = createHash("sha256").update(STYLE).digest("base64");
const CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

const LOGO = `<svg viewBox="0 0 24 24" aria-hidden="true"><rect x="3" y="2" width="18" height="20" rx="3" fill="#2f5bea"/><rect x="7" y="7" width="10" height="2" rx="1" fill="#fff"/><rect x="7" y="11" width="10" height="2" rx="1" fill="#fff"/><rect x="7" y="15" width="6" height="2" rx="1" fill="#fff"/></svg>`;
const CHECK = `<svg viewBox="0 0 24 24" aria-hidden="true"><circle cx="12" cy="12" r="11" fill="#13795b"/><path d="M7 12.5l3.2 3.2L17 9" stroke="#fff" stroke-width="2.4" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>`;

const number = (value: number) => value.toLocaleString("en-US");

function planOrUndefined(id: string) {
  return isPlanId(id) ? PLANS[id as PlanId] : undefined;
}

function limitsTable(fromId: string, toId: string): string {
  const to = planOrUndefined(toId)!;
  const from = planOrUndefined(fromId);
  const rows: [string, (p: typeof to) => string][] = [
    ["Renders a month", (p) => number(p.rendersPerMonth)],
    ["Requests a minute", (p) => number(p.requestsPerMinute)],
    ["Renders at a time", (p) => number(p.concurrentRenders)],
  ];
  const head = from ? `<thead><tr><th></th><th>${escapeHtml(from.name)} (now)</th><th class="new">${escapeHtml(to.name)}</th></tr></thead>` : "";
  const body = rows.map(([label, get]) => `<tr><td>${label}</td>${from ? `<td>${get(from)}</td>` : ""}<td class="new">${get(to)}</td></tr>`).join("");
  return `<table>${head}<tbody>${body}</tbody></table>`;
}

function layout(title: string, content: string, session: meteringV1.CheckoutSession): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · Pressroom</title>
<style>${STYLE}</style>
</head>
<body>
<main class="card">
<div class="top"><span class="brand">${LOGO}Pressroom</span><span class="badge">${session.provider === "stripe" ? "Checkout by Stripe" : "Secure checkout"}</span></div>
${content}
<p class="meta">Checkout session <code>${escapeHtml(session.sessionId)}</code>${session.status === "open" ? ` · valid until ${escapeHtml(new Date(session.expiresAt).toUTCString())}` : ""}</p>
</main>
</body>
</html>
`;
}

function checkoutPage(session: meteringV1.CheckoutSession, confirmToken: string): { title: string; html: string } {
  const plan = planOrUndefined(session.plan);
  if (!plan) throw errors.internal();
  const price = `<p class="price"><span class="amount">$${number(plan.priceUsd)}</span><span class="per">USD, one payment</span></p>`;
  if (session.status === "completed") {
    const title = `You're on ${plan.name}`;
    return {
      title,
      html: layout(
        title,
        `<p class="done">${CHECK}Upgrade confirmed</p>
<h1 id="result">${escapeHtml(title)}</h1>
<p class="note">Your API key has the ${escapeHtml(plan.name)} plan's limits from now on (within a few seconds on every server). <code>GET /v1/keys/usage</code> shows them.</p>
${limitsTable("", session.plan)}`,
        session,
      ),
    };
  }
  const title = `Upgrade to ${plan.name}`;
  const heading = `<p class="eyebrow">Upgrade your API key</p><h1>Pressroom ${escapeHtml(plan.name)}</h1>${price}${limitsTable(session.fromPlan, session.plan)}`;
  if (session.provider === "stripe") {
    return {
      title,
      html: layout(
        title,
        `${heading}<a class="button" href="${escapeHtml(session.checkoutUrl)}" rel="noreferrer">Continue to payment</a>
<p class="note">Payment is handled by Stripe. Your key moves to ${escapeHtml(plan.name)} as soon as Stripe confirms the payment; reload this page to see it.</p>`,
        session,
      ),
    };
  }
  return {
    title,
    html: layout(
      title,
      `${heading}<form method="post" action="/v1/billing/checkout/${escapeHtml(session.sessionId)}">
<input type="hidden" name="token" value="${escapeHtml(confirmToken)}">
<button type="submit" id="confirm">Confirm upgrade to ${escapeHtml(plan.name)} · $${number(plan.priceUsd)}</button>
</form>
<p class="note">This is Pressroom's local checkout: no card is charged. Your key moves to ${escapeHtml(plan.name)} as soon as you confirm.</p>`,
      session,
    ),
  };
}

function sendPage(ctx: Context, page: { html: string }): void {
  ctx.status = 200;
  ctx.type = "text/html; charset=utf-8";
  ctx.set("Cache-Control", "no-store");
  ctx.set("Content-Security-Policy", CSP);
  ctx.set("X-Frame-Options", "DENY");
  // The URL is the session's capability: never send it to another site as a
  // Referer. (Not no-referrer: that makes browsers send "Origin: null" with
  // the page's own form, which the cross-site check must refuse.)
  ctx.set("Referrer-Policy", "same-origin");
  ctx.body = page.html;
}

// ---------------------------------------------------------------------------
// The OpenAPI paths of the routes above (the JSON checkout itself is in
// openapi.ts already). Merged into the document's paths by openapi.ts.

const errorOf = (description: string, codes: string[]) => ({
  description,
  headers: { "Request-Id": { $ref: "#/components/headers/Request-Id" } },
  content: {
    "application/json": {
      schema: { allOf: [{ $ref: "#/components/schemas/Error" }, { type: "object", properties: { code: { enum: codes } } }] },
    },
  },
});
const internalError = errorOf("A server-side failure (including a dependency that is briefly unavailable); safe to retry with backoff.", ["INTERNAL_ERROR"]);
const sessionParameter = {
  name: "id",
  in: "path",
  required: true,
  description: "The session_id answered by POST /v1/billing/checkout.",
  schema: { type: "string", pattern: "^chk_[0-9a-z]{26}$" },
};
const pageHeaders = {
  "Request-Id": { $ref: "#/components/headers/Request-Id" },
  "Cache-Control": { $ref: "#/components/headers/Cache-Control" },
  "Referrer-Policy": { description: "same-origin: the page's URL is never sent to another site.", required: true, schema: { type: "string", const: "same-origin" } },
  "Content-Security-Policy": { description: "No script; only the page's own stylesheet; forms post to this origin.", required: true, schema: { type: "string" } },
};

export const billingOpenApiPaths = {
  "/v1/billing/checkout/{id}": {
    get: {
      operationId: "getCheckoutPage",
      summary: "The checkout page of a session (HTML)",
      description:
        "Opened in a browser from checkout_url. With the local provider it shows the plan, its limits and price and a Confirm button; once confirmed (or, with Stripe, paid) it shows the completed upgrade. No key needed: the session id is the capability, so treat checkout_url like a password.",
      tags: ["Account"],
      security: [],
      parameters: [sessionParameter],
      responses: {
        "200": { description: "The page.", headers: pageHeaders, content: { "text/html": { schema: { type: "string" } } } },
        "404": errorOf("No such checkout session.", ["NOT_FOUND"]),
        "410": errorOf("The session expired before it was confirmed or paid; start a new checkout.", ["URL_EXPIRED"]),
        "500": internalError,
      },
    },
    post: {
      operationId: "confirmCheckout",
      summary: "Confirm a local checkout (the page's form)",
      description:
        "The Confirm button of the local provider's page: upgrades the key's plan at once (recorded as an account.plan_changed event with actor billing:local) and redirects back to the page, which then shows the completed upgrade. Needs the one-time token of the page view; a cross-site post is refused. Confirming a completed session again changes nothing.",
      tags: ["Account"],
      security: [],
      parameters: [sessionParameter],
      requestBody: {
        required: true,
        content: {
          "application/x-www-form-urlencoded": {
            schema: { type: "object", required: ["token"], properties: { token: { type: "string", description: "The one-time token in the page's form." } } },
          },
        },
      },
      responses: {
        "303": {
          description: "Confirmed: see the page again.",
          headers: {
            "Request-Id": { $ref: "#/components/headers/Request-Id" },
            Location: { description: "The checkout page.", required: true, schema: { type: "string", pattern: "^/v1/billing/checkout/chk_[0-9a-z]{26}$" } },
          },
          content: { "text/html": { schema: { type: "string" } }, "text/plain": { schema: { type: "string" } } },
        },
        "404": errorOf("No such checkout session.", ["NOT_FOUND"]),
        "410": errorOf("The session expired before it was confirmed.", ["URL_EXPIRED"]),
        "422": errorOf(
          "PAYLOAD_INVALID: not the page's form (content type, missing or stale token, cross-site post), or a Stripe session. PLAN_INVALID: the key is no longer below this plan.",
          ["PAYLOAD_INVALID", "PLAN_INVALID"],
        ),
        "500": internalError,
      },
    },
  },
  "/v1/billing/stripe/webhook": {
    post: {
      operationId: "stripeWebhook",
      summary: "Stripe's webhook endpoint",
      description:
        "For Stripe only. The raw body and Stripe-Signature are verified with Stripe's SDK (the endpoint's signing secret, 300 s tolerance); checkout.session.completed (and checkout.session.async_payment_succeeded) upgrade the key once per event, recorded as account.plan_changed with actor billing:stripe. Other events are acknowledged and ignored.",
      tags: ["Account"],
      security: [],
      parameters: [{ name: "Stripe-Signature", in: "header", required: true, schema: { type: "string" } }],
      requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
      responses: {
        "200": {
          description: "Received (applied, a duplicate, or ignored).",
          headers: { "Request-Id": { $ref: "#/components/headers/Request-Id" } },
          content: {
            "application/json": {
              schema: {
                type: "object",
                additionalProperties: false,
                required: ["received", "outcome"],
                properties: { received: { const: true }, outcome: { enum: ["applied", "duplicate", "ignored", "awaiting_payment", "not_an_upgrade"] } },
              },
            },
          },
        },
        "404": errorOf("Stripe webhooks are not configured on this server.", ["NOT_FOUND"]),
        "422": errorOf("The body or Stripe-Signature does not verify (wrong secret, altered body, older than 300 s), or the body is too large.", ["PAYLOAD_INVALID"]),
        "500": internalError,
      },
    },
  },
};

import { createHash } from "node:crypto";
import type { meteringV1 } from "@pressroom/contracts";
import { PLANS, isPlanId, type PlanId } from "@pressroom/domain";
import type { Context } from "koa";
import { errors } from "../errors";
import { escapeHtml } from "../html";

/*
 * The checkout page (GET /v1/billing/checkout/<session_id>): static HTML, no
 * script at all, one inline stylesheet allowed by its hash in the
 * Content-Security-Policy.
 */

const STYLE = [
  "",
  ":root{color-scheme:light;--ink:#16181d;--muted:#5d6370;--line:#e4e6eb;--accent:#2f5bea;--accent-ink:#fff;--ok:#13795b;--bg:#f4f5f8}",
  "*{box-sizing:border-box}",
  "body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:32px 16px;background:var(--bg);color:var(--ink);" +
    'font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}',
  ".card{width:100%;max-width:520px;background:#fff;border:1px solid var(--line);border-radius:16px;box-shadow:0 12px 32px rgba(22,24,29,.08);padding:32px}",
  ".top{display:flex;align-items:center;justify-content:space-between;margin-bottom:28px}",
  ".brand{display:flex;align-items:center;gap:8px;font-weight:700;letter-spacing:-.01em}",
  ".brand svg{width:22px;height:22px}",
  ".badge{font-size:12px;color:var(--muted);border:1px solid var(--line);border-radius:999px;padding:2px 10px}",
  ".eyebrow{margin:0;color:var(--muted);font-size:13px;text-transform:uppercase;letter-spacing:.08em}",
  "h1{margin:4px 0 8px;font-size:28px;letter-spacing:-.02em}",
  ".price{display:flex;align-items:baseline;gap:6px;margin:0 0 24px}",
  ".amount{font-size:40px;font-weight:700;letter-spacing:-.03em}",
  ".per{color:var(--muted)}",
  "table{width:100%;border-collapse:collapse;margin:0 0 24px;font-size:15px}",
  "th,td{padding:10px 0;border-bottom:1px solid var(--line);text-align:right}",
  "th:first-child,td:first-child{text-align:left;font-weight:400;color:var(--muted)}",
  "thead th{font-size:13px;color:var(--muted);font-weight:600}",
  "td.new,th.new{font-weight:700;color:var(--ink)}",
  "button,.button{display:block;width:100%;padding:14px 18px;border:0;border-radius:10px;background:var(--accent);color:var(--accent-ink);" +
    "font-family:inherit;font-size:16px;font-weight:600;line-height:1.2;text-align:center;text-decoration:none;cursor:pointer}",
  "button:hover,.button:hover{filter:brightness(1.08)}",
  "button:focus-visible,.button:focus-visible{outline:3px solid #9db2ff;outline-offset:2px}",
  ".note{margin:16px 0 0;color:var(--muted);font-size:14px}",
  ".note+table{margin-top:16px}",
  ".meta{margin:20px 0 0;padding-top:16px;border-top:1px solid var(--line);color:var(--muted);font-size:12px;word-break:break-all}",
  ".done{display:flex;align-items:center;gap:10px;color:var(--ok);font-weight:600;margin:0 0 8px}",
  ".done svg{width:22px;height:22px}",
  "code{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--bg);padding:1px 5px;border-radius:4px}",
  "",
].join("\n");
const STYLE_HASH = createHash("sha256").update(STYLE).digest("base64");
const CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

const LOGO =
  '<svg viewBox="0 0 24 24" aria-hidden="true"><rect x="3" y="2" width="18" height="20" rx="3" fill="#2f5bea"/>' +
  '<rect x="7" y="7" width="10" height="2" rx="1" fill="#fff"/><rect x="7" y="11" width="10" height="2" rx="1" fill="#fff"/>' +
  '<rect x="7" y="15" width="6" height="2" rx="1" fill="#fff"/></svg>';
const CHECK =
  '<svg viewBox="0 0 24 24" aria-hidden="true"><circle cx="12" cy="12" r="11" fill="#13795b"/>' +
  '<path d="M7 12.5l3.2 3.2L17 9" stroke="#fff" stroke-width="2.4" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>';

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
  const badge = session.provider === "stripe" ? "Checkout by Stripe" : "Secure checkout";
  const validUntil = session.status === "open" ? ` · valid until ${escapeHtml(new Date(session.expiresAt).toUTCString())}` : "";
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
<div class="top"><span class="brand">${LOGO}Pressroom</span><span class="badge">${badge}</span></div>
${content}
<p class="meta">Checkout session <code>${escapeHtml(session.sessionId)}</code>${validUntil}</p>
</main>
</body>
</html>
`;
}

export function checkoutPage(session: meteringV1.CheckoutSession, confirmToken: string): { title: string; html: string } {
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
<p class="note">Your API key has the ${escapeHtml(plan.name)} plan's limits from now on (within a few seconds on every server). ` +
          `<code>GET /v1/keys/usage</code> shows them.</p>
${limitsTable("", session.plan)}`,
        session,
      ),
    };
  }
  const title = `Upgrade to ${plan.name}`;
  const heading =
    `<p class="eyebrow">Upgrade your API key</p><h1>Pressroom ${escapeHtml(plan.name)}</h1>${price}` + limitsTable(session.fromPlan, session.plan);
  if (session.provider === "stripe") {
    return {
      title,
      html: layout(
        title,
        `${heading}<a class="button" href="${escapeHtml(session.checkoutUrl)}" rel="noreferrer">Continue to payment</a>
<p class="note">Payment is handled by Stripe. ` +
          `Your key moves to ${escapeHtml(plan.name)} as soon as Stripe confirms the payment; reload this page to see it.</p>`,
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
<p class="note">This is Pressroom's local checkout: no card is charged. ` + `Your key moves to ${escapeHtml(plan.name)} as soon as you confirm.</p>`,
      session,
    ),
  };
}

export function sendPage(ctx: Context, page: { html: string }): void {
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

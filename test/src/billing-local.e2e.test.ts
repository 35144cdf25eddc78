import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { accountEventsV1 } from "@pressroom/contracts";
import { call, streams } from "@pressroom/platform";
import { DEMO_API_KEY } from "@pressroom/domain";
import { connect, type NatsConnection } from "nats";
import pg from "pg";
import puppeteer, { type Browser } from "puppeteer-core";
import { errorShape, type ApiResponse } from "./test-support/api";
import { OpenApiChecker } from "./test-support/openapi";
import { WITHOUT_RENDER, startHarness, type Harness } from "./test-support/harness";

/**
 * Billing with the default `local` provider, over HTTP and in a real browser:
 * POST /v1/billing/checkout answers a checkout_url on the gateway; the page
 * shows the plan, its limits and price; Confirm upgrades the key at once
 * (identity SetPlan, an account.plan_changed event with actor billing:local).
 */

function expectError(response: ApiResponse, status: number, code: string): { error: string; code: string; hint: string } {
  assert.equal(response.status, status, `expected ${status} ${code}, got ${response.status} ${response.text}`);
  const body = errorShape(response);
  assert.equal(body.code, code, response.text);
  assert.equal(response.headers["cache-control"], "no-store");
  return body;
}

const tokenOf = (html: string) => /name="token" value="([^"]+)"/.exec(html)?.[1] ?? "";
const form = (token: string) => ({ body: new URLSearchParams({ token }).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

describe("billing with the local provider", () => {
  let h: Harness;
  let nc: NatsConnection;
  let browser: Browser;

  /** Every account event of a key on the ACCOUNTS stream. */
  async function accountEvents(keyId: string): Promise<accountEventsV1.AccountEvent[]> {
    const jsm = await nc.jetstreamManager();
    const events: accountEventsV1.AccountEvent[] = [];
    const info = await jsm.streams.info(streams.ACCOUNTS);
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const message = await jsm.streams.getMessage(streams.ACCOUNTS, { seq }).catch(() => undefined);
      if (!message) continue;
      const event = accountEventsV1.AccountEvent.decode(message.data);
      if (event.keyId === keyId) events.push(event);
    }
    return events;
  }

  /** The gateway caches authentication for 2 s: the new plan shows within that. */
  async function usageOnPlan(apiKey: string, plan: string): Promise<ApiResponse> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const usage = await h.api.get("/v1/keys/usage", { key: apiKey });
      if (usage.json?.plan === plan || Date.now() > deadline) return usage;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async function checkout(apiKey: string, plan: string): Promise<{ checkout_url: string; session_id: string; plan: string }> {
    const response = await h.api.post("/v1/billing/checkout", { plan }, { key: apiKey });
    assert.equal(response.status, 201, response.text);
    return response.json;
  }

  before(async () => {
    h = await startHarness({ only: WITHOUT_RENDER });
    nc = await connect({ servers: h.stack.natsUrl });
    browser = await puppeteer.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/lib/chromium/chromium-headless-shell",
      headless: "shell",
      args: ["--no-sandbox", "--disable-gpu"],
    });
  });

  after(async () => {
    await browser?.close();
    await nc?.close();
    await h?.stop();
  });

  describe("POST /v1/billing/checkout", () => {
    it("answers 201 {checkout_url, session_id, plan}, the URL being the gateway's checkout page", async () => {
      const { apiKey } = await h.admin.createKey("free");
      const response = await h.api.post("/v1/billing/checkout", { plan: "starter" }, { key: apiKey });
      assert.equal(response.status, 201, response.text);
      assert.deepEqual(Object.keys(response.json).sort(), ["checkout_url", "plan", "session_id"]);
      assert.match(response.json.session_id, /^chk_[0-9a-z]{26}$/);
      assert.equal(response.json.plan, "starter");
      assert.equal(response.json.checkout_url, `${h.stack.baseUrl}/v1/billing/checkout/${response.json.session_id}`);
      assert.equal(response.headers["ratelimit-limit"], "10");
      assert.equal(response.headers["cache-control"], "no-store");
    });

    it("refuses an unknown or unpaid plan (422 PAYLOAD_INVALID) and the same plan or a downgrade (422 PLAN_INVALID), with a way forward", async () => {
      const pro = await h.admin.createKey("pro");
      assert.match(
        expectError(await h.api.post("/v1/billing/checkout", { plan: "gold" }, { key: pro.apiKey }), 422, "PAYLOAD_INVALID").error,
        /^plan: must be one of starter, pro, business/,
      );
      assert.match(
        expectError(await h.api.post("/v1/billing/checkout", { plan: "free" }, { key: pro.apiKey }), 422, "PAYLOAD_INVALID").error,
        /^plan: must be one of/,
      );
      const same = expectError(await h.api.post("/v1/billing/checkout", { plan: "pro" }, { key: pro.apiKey }), 422, "PLAN_INVALID");
      assert.match(same.error, /already on the pro plan/);
      assert.match(same.hint, /business/);
      const down = expectError(await h.api.post("/v1/billing/checkout", { plan: "starter" }, { key: pro.apiKey }), 422, "PLAN_INVALID");
      assert.match(down.error, /starter would be a downgrade from your pro plan/);
      const top = await h.admin.createKey("business");
      assert.match(expectError(await h.api.post("/v1/billing/checkout", { plan: "business" }, { key: top.apiKey }), 422, "PLAN_INVALID").hint, /highest plan/);
    });

    it("refuses the public demo key: 422 PLAN_INVALID pointing at signup", async () => {
      const body = expectError(await h.api.post("/v1/billing/checkout", { plan: "pro" }, { key: DEMO_API_KEY }), 422, "PLAN_INVALID");
      assert.equal(body.error, "the public demo key cannot be upgraded");
      assert.match(body.hint, /POST \/v1\/signup/);
    });
  });

  describe("the checkout page in a browser", () => {
    it("shows the plan, its limits and price; Confirm upgrades the key at once and GET /v1/keys/usage shows the new limits", async () => {
      const { apiKey, keyId } = await h.admin.createKey("starter");
      const session = await checkout(apiKey, "pro");
      const page = await browser.newPage();
      try {
        const response = await page.goto(session.checkout_url, { waitUntil: "load" });
        assert.equal(response?.status(), 200);
        const headers = response!.headers();
        assert.match(headers["content-type"] ?? "", /^text\/html; charset=utf-8/);
        assert.match(headers["content-security-policy"] ?? "", /default-src 'none'/);
        assert.equal(headers["referrer-policy"], "same-origin");
        assert.equal(headers["cache-control"], "no-store");
        assert.equal(await page.title(), "Upgrade to Pro · Pressroom");
        const text = await page.$eval("main", (el) => (el as HTMLElement).innerText);
        for (const expected of [
          "Pressroom Pro",
          "$29",
          "Starter (now)",
          "10,000",
          "1,000",
          "300",
          "60",
          "Renders a month",
          "Requests a minute",
          "Renders at a time",
        ]) {
          assert.ok(text.includes(expected), `the page shows ${expected}:\n${text}`);
        }
        // The stylesheet applies (allowed by its hash in the CSP): the button is styled, not a default grey one.
        const background = await page.$eval("#confirm", (el) => getComputedStyle(el).backgroundColor);
        assert.equal(background, "rgb(47, 91, 234)");
        assert.equal(await page.$eval("#confirm", (el) => (el as HTMLElement).innerText), "Confirm upgrade to Pro · $29");

        await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("#confirm")]);
        assert.equal(page.url(), session.checkout_url, "back on the page after the post (303)");
        assert.equal(await page.title(), "You're on Pro · Pressroom");
        assert.equal(await page.$eval("#result", (el) => (el as HTMLElement).innerText), "You're on Pro");
        assert.equal(await page.$("#confirm"), null, "no second Confirm");
      } finally {
        await page.close();
      }

      const usage = await usageOnPlan(apiKey, "pro");
      assert.equal(usage.status, 200, usage.text);
      assert.equal(usage.json.plan, "pro");
      assert.deepEqual([usage.json.renders.limit, usage.json.rate_limit.limit, usage.json.concurrency.limit], [10_000, 300, 5]);
      assert.equal(usage.headers["ratelimit-limit"], "300");

      const changes = (await accountEvents(keyId)).filter((e) => e.type === "account.plan_changed");
      const upgrade = changes.at(-1)!;
      assert.equal(upgrade.actor, "billing:local");
      assert.deepEqual(upgrade.planChanged, { fromPlan: "starter", toPlan: "pro" });
      assert.ok(Math.abs(Date.parse(upgrade.time) - Date.now()) < 60_000);
      assert.equal(changes.filter((e) => e.actor.startsWith("billing:")).length, 1);

      // The page stays a receipt; posting again changes nothing; a new checkout to the same plan is refused.
      const again = await h.api.download(session.checkout_url);
      assert.equal(again.status, 200);
      assert.match(again.text, /You&#39;re on Pro/);
      assert.equal(tokenOf(again.text), "");
      const repost = await h.api.request("POST", new URL(session.checkout_url).pathname, form("any"));
      assert.equal(repost.status, 303);
      assert.equal((await accountEvents(keyId)).filter((e) => e.actor.startsWith("billing:")).length, 1);
      expectError(await h.api.post("/v1/billing/checkout", { plan: "pro" }, { key: apiKey }), 422, "PLAN_INVALID");
    });
  });

  describe("the Confirm form is safe to expose", () => {
    it("needs the one-time token of the latest page view, from the same site, as a form", async () => {
      const { apiKey } = await h.admin.createKey("free");
      const session = await checkout(apiKey, "starter");
      const path = new URL(session.checkout_url).pathname;
      const first = tokenOf((await h.api.get(path)).text);
      assert.match(first, /^[A-Za-z0-9_-]{43}$/);

      const refusals: [string, ApiResponse][] = [
        ["no token", await h.api.request("POST", path, form(""))],
        ["a wrong token", await h.api.request("POST", path, form("x".repeat(43)))],
        ["a null Origin", await h.api.request("POST", path, { ...form(first), headers: { ...form(first).headers, origin: "null" } })],
        ["another site's Origin", await h.api.request("POST", path, { ...form(first), headers: { ...form(first).headers, origin: "https://evil.example" } })],
        ["a cross-site fetch", await h.api.request("POST", path, { ...form(first), headers: { ...form(first).headers, "sec-fetch-site": "cross-site" } })],
        ["JSON instead of the form", await h.api.post(path, { token: first })],
      ];
      for (const [why, response] of refusals) assert.equal(expectError(response, 422, "PAYLOAD_INVALID").code, "PAYLOAD_INVALID", why);

      // A new page view issues a new token; the old one is stale.
      const second = tokenOf((await h.api.get(path)).text);
      assert.notEqual(second, first);
      assert.match(expectError(await h.api.request("POST", path, form(first)), 422, "PAYLOAD_INVALID").error, /stale/);
      const same = `http://${new URL(h.stack.baseUrl).host}`;
      const confirmed = await h.api.request("POST", path, {
        ...form(second),
        headers: { ...form(second).headers, origin: same, "sec-fetch-site": "same-origin" },
      });
      assert.equal(confirmed.status, 303, confirmed.text);
      assert.equal(confirmed.headers.location, path);
      assert.equal((await usageOnPlan(apiKey, "starter")).json.plan, "starter");
    });

    it("refuses a session that is unknown, expired, or no longer an upgrade", async () => {
      expectError(await h.api.get("/v1/billing/checkout/chk_00000000000000000000000000"), 404, "NOT_FOUND");
      expectError(await h.api.get("/v1/billing/checkout/nope"), 404, "NOT_FOUND");
      expectError(await h.api.request("POST", "/v1/billing/checkout/chk_00000000000000000000000000", form("x")), 404, "NOT_FOUND");

      const { apiKey, keyId } = await h.admin.createKey("free");
      const stale = await checkout(apiKey, "pro");
      const db = new pg.Client({ connectionString: h.stack.databaseUrl });
      await db.connect();
      try {
        await db.query("update metering.checkout_sessions set expires_at = now() - interval '1 second' where session_id = $1", [stale.session_id]);
      } finally {
        await db.end();
      }
      const path = new URL(stale.checkout_url).pathname;
      assert.match(expectError(await h.api.get(path), 410, "URL_EXPIRED").hint, /POST \/v1\/billing\/checkout/);
      expectError(await h.api.request("POST", path, form("x")), 410, "URL_EXPIRED");

      // The key moved past the plan between checkout and confirm (an operator upgraded it).
      const later = await checkout(apiKey, "starter");
      const token = tokenOf((await h.api.download(later.checkout_url)).text);
      await call(h.admin.identity, h.admin.identity.setPlan, { apiKey: "", keyId, plan: "business", actor: "operator" });
      const refused = expectError(await h.api.request("POST", new URL(later.checkout_url).pathname, form(token)), 422, "PLAN_INVALID");
      assert.match(refused.error, /downgrade/);
    });

    it("POST /v1/billing/stripe/webhook is 404 when Stripe is not configured", async () => {
      const response = await h.api.request("POST", "/v1/billing/stripe/webhook", {
        body: "{}",
        headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=00" },
      });
      expectError(response, 404, "NOT_FOUND");
    });
  });

  it("every response matches the OpenAPI document", async () => {
    const served = await OpenApiChecker.fetch(h.stack.baseUrl);
    assert.ok(served.doc.paths["/v1/billing/checkout/{id}"], "the served document has the billing paths");
    const { problems } = served.checkAll(h.api.exchanges);
    assert.deepEqual(problems, []);
  });

  it("no key, checkout session or confirm token reaches a log line", () => {
    const logs = h.stack.output();
    const sessions = h.api.exchanges.flatMap((x) => /chk_[0-9a-z]{26}/.exec(x.path) ?? []).filter((id) => id !== "chk_00000000000000000000000000");
    const tokens = h.api.exchanges
      .flatMap((x) => (x.headers["content-type"]?.startsWith("text/html") ? [tokenOf(x.body.toString("utf8"))] : []))
      .filter(Boolean);
    assert.ok(sessions.length > 0 && tokens.length > 0);
    assert.deepEqual(
      [...h.api.secrets(), ...sessions, ...tokens].filter((secret) => logs.includes(secret)),
      [],
    );
  });
});

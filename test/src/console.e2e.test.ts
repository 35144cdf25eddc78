import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { verifyWebhookSignature } from "@pressroom/client";
import { call } from "@pressroom/platform";
import { REPO_ROOT } from "@pressroom/stack";
import type { Browser, Page } from "puppeteer-core";
import { assertAccessible, clickText, launchBrowser, setEditorText, waitForText, watch, type Watched } from "./test-support/browser";
import { startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

/**
 * The console used as a person uses it, in Chromium against the real services: sign up and sign
 * in, upgrade through the checkout, write a template in the editor (its live preview rendering the
 * draft, its compile error shown at its line), a second version and the diffs of the two (source
 * and pixels), render it, find the job and its timeline,
 * download it, reveal and rotate the webhook secret, see a failed callback and replay it to a
 * receiver that then gets the same event id, refuse a forged cross-site request, sign out and find
 * the session dead, and the demo key's read-only console. Every page passes axe-core with no
 * serious or critical problem, breaks no part of its Content-Security-Policy and is photographed:
 * into .data/console-screenshots/, or with CONSOLE_SCREENSHOTS=docs into docs/console/, the README's
 * pictures (a run rewrites every file, so only a run meant to refresh them writes into the tree).
 */

const SHOTS = process.env.CONSOLE_SCREENSHOTS === "docs" ? path.join(REPO_ROOT, "docs", "console") : path.join(REPO_ROOT, ".data", "console-screenshots");
const SLOW = 120_000;
const TEMPLATE_HTML = '<!doctype html>\n<html>\n<body style="font-family: sans-serif">\n  <h1>Welcome, {{name}}</h1>\n  <p>{{message}}</p>\n</body>\n</html>';

describe("the console in a browser", () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;
  let watched: Watched;
  let origin: string;
  let apiKey = "";
  const receiver = new WebhookReceiver();
  let receiverFails = true;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    await receiver.start();
    receiver.on("/console-hook", () => ({ status: receiverFails ? 503 : 200 }));
    h = await startHarness({
      serviceEnv: { webhook: receiver.env({ WEBHOOK_RETRY_BASE_MS: "200", WEBHOOK_RETRY_CAP_MS: "400", WEBHOOK_RETRY_WINDOW_MS: "1500" }) },
    });
    origin = new URL(h.stack.baseUrl).origin;
    browser = await launchBrowser();
    page = await browser.newPage();
    page.setDefaultTimeout(SLOW);
    await page.setViewport({ width: 1280, height: 900 });
    watched = await watch(page, origin);
  });

  after(async () => {
    await browser?.close();
    await h?.stop();
    await receiver.stop();
  });

  /** Goes to a console path (a full load), then waits for `text`. */
  async function open(pathname: string, text: string): Promise<void> {
    await page.goto(`${origin}${pathname}`, { waitUntil: "load" });
    await waitForText(page, text);
  }

  /** Photographs the whole page at `width`: the window made as tall as the page first, so that the editors and charts lay it out for that size. */
  async function photograph(file: string, width: number): Promise<void> {
    await page.setViewport({ width, height: 900 });
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewport({ width, height });
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    await page.screenshot({ path: path.join(SHOTS, file) });
  }

  /** Checks the page as it is now (accessibility, CSP, errors, other origins), at a laptop's width and with `phone` at a phone's, and photographs it. */
  async function check(name: string, options: { phone?: boolean; shot?: boolean } = {}): Promise<void> {
    await assertAccessible(page, name);
    assert.deepEqual(watched, { violations: [], errors: [], foreign: [] }, `${name}: nothing refused, thrown or fetched elsewhere`);
    if (options.shot !== false) await photograph(`${name}.png`, 1280);
    if (options.phone) {
      await page.setViewport({ width: 390, height: 844 });
      await assertAccessible(page, `${name} on a phone`);
      const wider = await page.evaluate(() =>
        Array.from(document.querySelectorAll("body *"))
          .filter((node) => node.getBoundingClientRect().right > window.innerWidth + 1 && !node.closest(".table-scroll, .cm-editor, pre"))
          .map((node) => `${node.tagName.toLowerCase()}.${node.className}`),
      );
      assert.deepEqual(wider.slice(0, 5), [], `${name}: nothing wider than a phone's screen`);
      await photograph(`${name}-phone.png`, 390);
    }
    await page.setViewport({ width: 1280, height: 900 });
  }

  it("signs up and signs in: the key is shown once, then exchanged for a cookie page scripts cannot read", async () => {
    await open("/console", "Sign in to the console");
    await page.waitForFunction(() => location.pathname === "/console/sign-in");
    await check("sign-in");
    await page.type("#email", "console-e2e@example.com");
    await clickText(page, "Get a free key");
    await page.waitForSelector(".issued output");
    apiKey = await page.$eval(".issued output", (node) => node.textContent!.trim());
    assert.match(apiKey, /^pr_live_/);
    h.api.remember(apiKey);
    await clickText(page, "Sign in with this key");
    await waitForText(page, "Renders this period");
    assert.equal(new URL(page.url()).pathname, "/console");
    assert.ok(!(await page.evaluate(() => document.cookie)).includes("pressroom_session"), "the session cookie is HttpOnly");
    assert.ok(!(await page.content()).includes(apiKey), "the key is gone from the page");
    const cookie = (await page.cookies()).find((c) => c.name === "pressroom_session")!;
    assert.deepEqual({ httpOnly: cookie.httpOnly, sameSite: cookie.sameSite }, { httpOnly: true, sameSite: "Strict" });
    h.api.remember(cookie.value);
  });

  it("upgrades the plan through the checkout", async () => {
    await waitForText(page, "Go to checkout");
    await Promise.all([page.waitForNavigation(), clickText(page, "Go to checkout")]);
    await page.waitForSelector("#confirm");
    await Promise.all([page.waitForNavigation(), page.click("#confirm")]);
    await open("/console", "Renders this period");
    await waitForText(page, "Starter");
  });

  it("writes a template in the editor: its live preview renders the draft as it is typed, shows a compile error at its line, then it is saved", async () => {
    const previewsUsed = async () => ((await h.api.get("/v1/keys/usage", { key: apiKey })).json as { previews: { used: number } }).previews.used;
    const before = await previewsUsed();
    await open("/console/templates", "No templates of your own yet");
    await clickText(page, "New template");
    await page.waitForSelector('[data-editor="html"] .cm-content');
    // The unsaved starter is rendered at once: POST /v1/templates/preview, counted as one of the month's previews.
    await page.waitForFunction(() => ((document.querySelector(".preview-pane figure.live img") as HTMLImageElement | null)?.naturalWidth ?? 0) > 0);
    const starter = await page.$eval(".preview-pane figure.live img", (img) => (img as HTMLImageElement).src);
    await page.type("#t-id", "welcome-note");
    await page.type("#t-name", "Welcome note");
    await setEditorText(page, '[data-editor="html"]', "<h1>Hello</h1>\n<p>{{#if name}}unclosed</p>");
    // Nothing saved yet: the live preview finds the compile error and marks its line.
    await page.waitForSelector('[data-editor="html"] .cm-lintRange-error');
    const marked = await page.$eval('[data-editor="html"] .cm-lintRange-error', (node) => node.closest(".cm-line")!.textContent);
    assert.match(marked!, /unclosed|\{\{#if/, "the diagnostic sits on the line that does not compile");
    await waitForText(page, "does not compile at line");
    assert.equal((await h.api.get("/v1/templates/welcome-note", { key: apiKey })).status, 404, "a draft is stored nowhere");
    await check("editor");
    await setEditorText(page, '[data-editor="html"]', TEMPLATE_HTML);
    await page.waitForFunction(
      (previous) => {
        const img = document.querySelector(".preview-pane figure.live img") as HTMLImageElement | null;
        return img !== null && img.src !== previous && img.naturalWidth > 0 && !document.querySelector(".cm-lintRange-error, .preview-pane .problems");
      },
      {},
      starter,
    );
    assert.ok((await previewsUsed()) >= before + 2, "each draft rendered is one of the month's previews");
    await clickText(page, "Create the template");
    await page.waitForFunction(() => location.pathname === "/console/templates/welcome-note");
    await waitForText(page, "Versions");
  });

  it("saves a second version and shows the source diff and the visual diff of the two", async () => {
    await clickText(page, "Edit: new version");
    await page.waitForSelector('[data-editor="html"] .cm-content');
    await setEditorText(page, '[data-editor="html"]', TEMPLATE_HTML.replace("<p>{{message}}</p>", "<p>{{message}}</p>\n  <p>Second version.</p>"));
    await clickText(page, "Save as a new version");
    await page.waitForFunction(() => location.pathname === "/console/templates/welcome-note" && document.body.innerText.includes("Compare version"));
    await clickText(page, "Show the changes");
    await page.waitForSelector(".diff .cm-changedLine", { timeout: 30_000 }).catch(async (err: unknown) => {
      const shown = await page.evaluate(() => document.querySelector("main")?.innerText ?? document.body.innerText);
      throw new Error(`no changed line in the diff; the page reads:\n${shown}`, { cause: err });
    });
    assert.match(await page.$eval(".diff", (node) => (node as HTMLElement).innerText), /Second version\./);
    // Each version's own stored preview, side by side, with the pixels that changed marked.
    await page.waitForSelector(".visual-diff[data-changed-pixels]");
    const changed = await page.$eval(".visual-diff", (node) => Number(node.getAttribute("data-changed-pixels")));
    assert.ok(changed > 0, "version 2 adds a line: pixels changed");
    const marks = await page.$eval(".visual-diff canvas", (node) => {
      const canvas = node as HTMLCanvasElement;
      const { data } = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height);
      let count = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i] === 219 && data[i + 1] === 0 && data[i + 2] === 122) count++;
      return count;
    });
    assert.equal(marks, changed, "every changed pixel is marked on the canvas");
    await check("template", { phone: true });
    await page.select("#diff-from", "2");
    await clickText(page, "Show the changes");
    await page.waitForSelector('.visual-diff[data-changed-pixels="0"]');
    await waitForText(page, "No pixel changed.");
    await open("/console/templates", "Welcome note");
    await page.waitForFunction(() => Array.from(document.querySelectorAll(".card img")).every((img) => (img as HTMLImageElement).naturalWidth > 0));
    await check("templates");
  });

  let jobId = "";

  it("renders from the template, finds the job in the list and its timeline, and downloads the PDF", async () => {
    await open("/console/templates/welcome-note", "Render it");
    await clickText(page, "Render");
    await page.waitForFunction(() => /Job job_\w+: succeeded/.test(document.querySelector(".notice")?.textContent ?? ""));
    jobId = await page.$eval(".notice a", (node) => node.textContent!.trim());
    await open("/console/jobs", jobId);
    await check("jobs", { shot: false });
    await page.select("#status", "failed");
    await waitForText(page, "No jobs match");
    await page.select("#status", "succeeded");
    await waitForText(page, jobId);
    await clickText(page, jobId);
    await waitForText(page, "Timeline");
    const timeline = await page.$$eval(".timeline .event", (nodes) => nodes.map((node) => (node as HTMLElement).innerText));
    assert.deepEqual(
      timeline.map((line) => /Accepted|Rendering started|Succeeded/.exec(line)?.[0]),
      ["Accepted", "Rendering started", "Succeeded"],
    );
    assert.ok(
      timeline.slice(1).every((line) => /\+\d/.test(line)),
      "each event after the first says how long after the one before it came",
    );
    const href = await page.$eval(".download a", (node) => (node as HTMLAnchorElement).href);
    const download = await h.api.download(href);
    assert.equal(download.status, 200);
    assert.equal(download.body.subarray(0, 5).toString(), "%PDF-");
    await check("job", { shot: false });
  });

  it("reveals and rotates the webhook secret, shows a failed delivery and replays it: the receiver gets the same event id, signed afresh", async () => {
    await open("/console/templates/welcome-note", "Render it");
    await page.type("#webhook-url", receiver.url("/console-hook"));
    await clickText(page, "Render");
    await page.waitForFunction(() => /Job job_\w+: queued/.test(document.querySelector(".notice")?.textContent ?? ""));
    const called = await page.$eval(".notice a", (node) => node.textContent!.trim());
    await eventually(
      "the callback given up",
      async () => ((await h.api.get(`/v1/jobs/${called}`, { key: apiKey })).json.webhook.state === "exhausted" ? true : undefined),
      30_000,
      250,
    );
    const failed = receiver.requestsOn("/console-hook");
    assert.ok(failed.length >= 2, "retried before it was given up");
    await eventually(
      "every attempt listed",
      async () => ((await h.api.get("/v1/webhooks/deliveries?limit=100", { key: apiKey })).json.data.length === failed.length ? true : undefined),
      15_000,
      250,
    );
    await open("/console/webhooks", "Recent deliveries");
    await clickText(page, "Reveal the secret");
    const before = await page.waitForSelector("output.secret").then((node) => node!.evaluate((n) => n.textContent!.trim()));
    assert.match(before, /^whsec_/);
    await clickText(page, "Rotate…");
    await clickText(page, "Rotate the secret");
    await waitForText(page, "callbacks carry two signatures");
    const after = await page.$eval("output.secret", (node) => node.textContent!.trim());
    assert.notEqual(after, before);
    h.api.remember(before);
    h.api.remember(after);
    assert.equal((await page.$$(".deliveries tbody tr")).length, failed.length);
    assert.ok((await page.$$eval(".deliveries .badge", (nodes) => nodes.map((n) => n.textContent))).every((status) => status === "failed"));

    receiverFails = false;
    await clickText(page, "Replay", ".deliveries tbody tr:first-child");
    await waitForText(page, "Replaying");
    const [replayed] = (await receiver.waitFor("/console-hook", failed.length + 1, 30_000)).slice(failed.length);
    assert.equal(JSON.parse(replayed!.rawBody).id, JSON.parse(failed[0]!.rawBody).id, "the same event id");
    assert.equal(replayed!.rawBody, failed[0]!.rawBody, "the same body");
    assert.ok(verifyWebhookSignature(replayed!.rawBody, replayed!.headers["x-service-signature"], after), "signed with the new secret");
    assert.ok(verifyWebhookSignature(replayed!.rawBody, replayed!.headers["x-service-signature"], before), "and, in the window, the previous one");
    assert.ok(!failed.some((f) => f.headers["x-service-signature"] === replayed!.headers["x-service-signature"]), "a fresh signature");
    await clickText(page, "Refresh");
    await page.waitForFunction(() => Array.from(document.querySelectorAll(".deliveries .badge")).some((n) => n.textContent === "succeeded"));
    await check("webhooks");
    await open(`/console/jobs/${called}`, "Callback");
    await page.waitForFunction(() => Array.from(document.querySelectorAll(".deliveries .badge")).some((n) => n.textContent === "succeeded"));
    assert.ok((await page.$$eval(".timeline .event", (nodes) => nodes.map((n) => n.textContent))).some((text) => /Callback replay asked for/.test(text!)));
    await check("job", { phone: true });
  });

  it("shows the overview with the renders per day", async () => {
    await open("/console", "Renders per day");
    await page.waitForSelector(".chart-box canvas");
    const today = new Date().toISOString().slice(0, 10);
    const rows = await page.$$eval(".chart tbody tr", (trs) => trs.map((tr) => Array.from((tr as HTMLTableRowElement).cells).map((cell) => cell.textContent)));
    assert.deepEqual(
      rows.find((cells) => cells[0] === today),
      [today, "2", "0", "0"],
      "today: the two renders, succeeded",
    );
    await check("overview", { phone: true });
    await open("/console/jobs", "Took");
    await check("jobs", { phone: true });
  });

  it("browses the gallery while signed in without spending the key's requests", async () => {
    const keyId = (await call(h.admin.identity, h.admin.identity.getKey, { apiKey, keyId: "" })).key!.keyId;
    const left = async () => (await call(h.admin.metering, h.admin.metering.getUsage, { keyId, plan: "starter" })).usage!.rate!.remaining;
    const before = await left();
    const gallery = await browser.newPage();
    await gallery.goto(`${origin}/`, { waitUntil: "networkidle0" });
    const previews = await gallery.$$eval(".card img", (imgs) => imgs.map((img) => (img as HTMLImageElement).naturalWidth));
    await gallery.close();
    assert.ok(previews.length > 0 && previews.every((width) => width > 0), "every preview loaded");
    assert.ok((await left()) >= before, "no request of the gallery counted against the signed-in key");
  });

  it("does nothing for a forged request from another origin", async () => {
    const secret = (await h.api.get("/v1/keys/webhook-secret", { key: apiKey })).json.secret;
    const forger: Server = createServer((_req, res) => {
      res.setHeader("Content-Type", "text/html");
      res.end(`<!doctype html><form id="f" method="post" action="${origin}/v1/keys/webhook-secret/rotate"></form>
<script>fetch("${origin}/v1/keys/webhook-secret/rotate", { method: "POST", credentials: "include", headers: { "X-CSRF-Token": "guess" } })
  .catch(() => undefined).finally(() => document.getElementById("f").submit());</script>`);
    });
    await new Promise<void>((resolve) => forger.listen(0, "127.0.0.1", resolve));
    try {
      const forged = await browser.newPage();
      await forged.goto(`http://127.0.0.1:${(forger.address() as AddressInfo).port}/`);
      await forged.waitForFunction((target) => location.origin === target, { timeout: 15_000 }, origin);
      assert.match(await forged.evaluate(() => document.body.innerText), /CSRF_REJECTED/);
      await forged.close();
    } finally {
      forger.close();
    }
    assert.equal((await h.api.get("/v1/keys/webhook-secret", { key: apiKey })).json.secret, secret, "the secret did not change");
  });

  it("signs out: the session is dead on the server", async () => {
    const cookie = (await page.cookies()).find((c) => c.name === "pressroom_session")!;
    await clickText(page, "Sign out");
    await waitForText(page, "Signed out.");
    const dead = await h.api.get("/v1/keys/usage", { headers: { cookie: `pressroom_session=${cookie.value}` } });
    assert.equal(dead.status, 401);
    assert.equal(dead.json.code, "AUTH_INVALID");
    await open("/console/jobs", "Sign in to the console");
  });

  it("signs the demo key in read-only: nothing to change on its pages", async () => {
    await clickText(page, "Look around with the demo key");
    await waitForText(page, "(read-only)");
    await open("/console/templates", "public ones are in the");
    assert.equal(await page.$('a[href="/console/templates/new"]'), null);
    await clickText(page, "Sign out");
    await waitForText(page, "Signed out.");
  });
});

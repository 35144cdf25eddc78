import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import puppeteer, { type Browser, type ElementHandle, type Page } from "puppeteer-core";

/** The Chromium the project installs (Debian's headless shell): puppeteer's own download cannot work offline. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/lib/chromium/chromium-headless-shell";

export function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: "shell",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--no-first-run"],
  });
}

/** What a page did that it should not: Content-Security-Policy violations, uncaught errors, requests to another origin. */
export interface Watched {
  violations: string[];
  errors: string[];
  foreign: string[];
}

/**
 * Watches a page for CSP violations (each with the directive, what was blocked, a sample and where
 * it came from, from the page's own securitypolicyviolation events), uncaught exceptions and
 * requests leaving `origin` (data: and blob: URLs come from nowhere).
 */
export async function watch(page: Page, origin: string): Promise<Watched> {
  const watched: Watched = { violations: [], errors: [], foreign: [] };
  await page.evaluateOnNewDocument(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      const where = `${e.sourceFile || "the page"}:${e.lineNumber}`;
      console.warn(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || "inline"} "${e.sample}" at ${where}`);
    });
  });
  page.on("console", (message) => {
    if (message.text().startsWith("CSP violation: ")) watched.violations.push(message.text());
  });
  page.on("pageerror", (error) => watched.errors.push(String(error)));
  page.on("request", (request) => {
    const url = request.url();
    if (!/^(data|blob):/.test(url) && new URL(url).origin !== origin) watched.foreign.push(url);
  });
  return watched;
}

const AXE = readFileSync(createRequire(__filename).resolve("axe-core/axe.min.js"), "utf8");

/**
 * Runs axe-core on the page as it is (WCAG 2.x A and AA rules and best practices) and fails on
 * any serious or critical violation, naming each with its nodes. axe is evaluated through the
 * DevTools protocol, which the page's Content-Security-Policy does not govern.
 */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join("; ")})`);
  });
  assert.deepEqual(violations, [], `${what}: serious or critical accessibility problems`);
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Replaces the text of the CodeMirror editor inside `selector` by selecting all of it and pasting
 * `text` (typing would have the editor close tags and brackets).
 */
export async function setEditorText(page: Page, selector: string, text: string): Promise<void> {
  await page.click(`${selector} .cm-content`);
  await page.keyboard.down("Control");
  await page.keyboard.press("KeyA");
  await page.keyboard.up("Control");
  await page.$eval(
    `${selector} .cm-content`,
    (content, value) => {
      const data = new DataTransfer();
      data.setData("text/plain", value);
      content.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    },
    text,
  );
  const shown = await page.$eval(`${selector} .cm-content`, (node) => (node as HTMLElement).innerText.replace(/\u200b/g, ""));
  assert.equal(shown.replace(/\s+/g, " ").trim(), text.replace(/\s+/g, " ").trim(), `${selector}'s text`);
}

/** Puppeteer's refusals to click an element that left the page (or has no box) before any mouse event was sent. */
const NOT_CLICKED = /not clickable|not an Element|detached|not attached/i;

/**
 * Clicks the button (or link) whose text is `text`, within `scope` (a selector) when given. The
 * console renders again as its data arrives, so the element found may be replaced before it can be
 * clicked: it is then looked up again (a few times), never clicked twice.
 */
export async function clickText(page: Page, text: string, scope = "body"): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const handle = await page.waitForFunction(
      (scopeSelector, wanted) =>
        Array.from(document.querySelectorAll(`${scopeSelector} button, ${scopeSelector} a`)).find((node) => (node as HTMLElement).innerText.trim() === wanted),
      {},
      scope,
      text,
    );
    const element = handle.asElement() as ElementHandle<Element> | null;
    assert.ok(element, `no "${text}" in ${scope}`);
    try {
      await element.click();
      return;
    } catch (err) {
      if (attempt >= 5 || !NOT_CLICKED.test(String(err))) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Waits until the page's text contains `text`. */
export async function waitForText(page: Page, text: string, timeout = 30_000): Promise<void> {
  await page.waitForFunction((wanted) => document.body?.textContent?.includes(wanted), { timeout }, text);
}

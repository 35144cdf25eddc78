import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import type { Browser } from "puppeteer-core";
import { RenderEngine, RenderFailure, Slot, engineSettings, layoutOf, openChromium, type RenderJob, type SubresourceFetcher } from "./index";
import { pdfText, startEngine } from "../test-support/engine";

/** A request the fetcher answered: its URL and the headers Chromium sent with it. */
interface Seen {
  url: string;
  headers: Record<string, string>;
}

const seen: Seen[] = [];

/**
 * Answers every sub-request with a small SVG, and records it. `/set-cookie.svg` answers with a
 * redirect that sets a cookie for its host, and `/after-cookie.svg` is where it redirects: the
 * redirected request carries the cookie, which shows the browser kept it.
 */
const recordingFetcher: SubresourceFetcher = async ({ url, headers }) => {
  seen.push({ url: url.href, headers });
  const cookie: Record<string, string> = { location: "/after-cookie.svg", "set-cookie": "left=by-a-job; Path=/; Secure; SameSite=None" };
  if (url.pathname === "/set-cookie.svg") return { status: 302, headers: cookie, body: Buffer.alloc(0) };
  return { status: 200, headers: { "content-type": "image/svg+xml" }, body: Buffer.from(svg("#2a6")) };
};

function svg(fill: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40" fill="${fill}"/></svg>`;
}

function requestsTo(path: string): Seen[] {
  return seen.filter((request) => new URL(request.url).pathname === path);
}

/** The document origin a request came from, as its Referer names it. */
function refererOf(request: Seen | undefined): string {
  const referer = request?.headers.Referer ?? request?.headers.referer;
  assert.ok(referer, "the request named its document");
  return new URL(referer).origin;
}

/**
 * The isolation suite for documents that run no script: the engine may write the key's next
 * such document over the last one (no new document), and every channel through which a document
 * without script could leave something for the next is cleared or refused. Each case checks both
 * that the reuse happened where it may (`writtenOver`) and that the next job finds nothing.
 */
describe("render engine: script-free documents written over their key's last one", () => {
  let engine: RenderEngine;
  let writtenBefore = 0;

  before(async () => {
    // One slot, no spare and one window kept for a key: a key's jobs return to its one window.
    engine = await startEngine({ slots: 1, sparePages: 0, keyWindows: 1, fetchSubresource: recordingFetcher });
  });
  after(() => engine.close());
  beforeEach(() => {
    seen.length = 0;
    writtenBefore = engine.stats().writtenOver;
  });

  async function render(html: string, extra: Partial<RenderJob> = {}): Promise<Uint8Array> {
    return (await engine.render({ kind: "pdf", html, keyId: "key-a", ...extra })).data;
  }
  const writtenOver = () => engine.stats().writtenOver - writtenBefore;

  it("writes the key's next script-free job over its last, with script execution off, and prints only the new document", async () => {
    await render("<p>first document</p>");
    const opened = engine.stats().windowsOpened;
    writtenBefore = engine.stats().writtenOver;
    const text = pdfText(await render("<p>second document</p>"));
    assert.equal(writtenOver(), 1, "the second job was written over the first");
    assert.equal(engine.stats().windowsOpened, opened);
    assert.match(text, /second document/);
    assert.doesNotMatch(text, /first document/);
  });

  it("never writes over a document that ran script, nor runs script where a script-free one was: a timer it left would write into the next", async () => {
    const leaving = "<p>scripted</p><script>setInterval(() => document.body.append(' LEAKED '), 1)</script>";
    assert.match(pdfText(await render(leaving)), /LEAKED/, "the timer runs (otherwise the test proves nothing)");
    const afterScript = pdfText(await render("<p>clean after script</p>"));
    assert.equal(writtenOver(), 0, "a new document after one with script");
    assert.doesNotMatch(afterScript, /LEAKED/);

    // The window's last document (just now) had no script: the next one may be written over it...
    assert.doesNotMatch(pdfText(await render("<p>written over</p>")), /LEAKED/);
    assert.equal(writtenOver(), 1);
    // ...but a job with script after it gets a new document, not the one the script-free job left.
    const scripted = pdfText(
      await render("<p id=out></p><script>out.textContent = 'history ' + history.length + ' ' + document.body.childElementCount</script>"),
    );
    assert.match(scripted, /history 1 2/);
    assert.equal(writtenOver(), 1);
  });

  it("treats a waitFor expression as script, and a <noscript> document as one that needs script", async () => {
    await render("<p>script-free</p>");
    writtenBefore = engine.stats().writtenOver;
    await render("<p id=ready>expression</p>", { options: { waitFor: { expression: "document.getElementById('ready') !== null" } } });
    assert.equal(writtenOver(), 0);
    await render("<p>script-free</p>");
    writtenBefore = engine.stats().writtenOver;
    const text = pdfText(await render("<p>shown</p><noscript>NOSCRIPT</noscript>"));
    assert.equal(writtenOver(), 0);
    assert.doesNotMatch(text, /NOSCRIPT/, "rendered with script on, as the document expects");
  });

  it("cookies from sub-resource responses: a document that asked for anything is not written over, and its cookies are cleared", async () => {
    await render('<img src="https://cookies.test/set-cookie.svg">');
    assert.equal(requestsTo("/after-cookie.svg")[0]?.headers.Cookie, "left=by-a-job", "the browser kept the cookie (otherwise the test proves nothing)");
    await render('<img src="https://cookies.test/plain.svg">');
    assert.equal(writtenOver(), 0);
    assert.equal(requestsTo("/plain.svg")[0]?.headers.Cookie, undefined);
  });

  it("the HTTP cache's part in sub-resource accounting: each job fetches its sub-resources itself, within its own budget", async () => {
    // Chromium reuses what a Document loaded for the same Document, whatever the cache headers say:
    // written over, the second job would show the first one's image without asking for it.
    await render('<img src="https://images.test/same.svg">');
    await render('<img src="https://images.test/same.svg">');
    assert.equal(writtenOver(), 0);
    assert.equal(requestsTo("/same.svg").length, 2);
  });

  it("a template's own assets: the next job shows its own version of a file, never the last one's", async () => {
    const html = '<img src="assets/logo.svg" width="40" height="40">';
    const ofKey = (fill: string, keyId: string) =>
      engine.render({ kind: "png", html, keyId, assets: new Map([["logo.svg", Buffer.from(svg(fill))]]), options: { imageWidth: 40, imageHeight: 40 } });
    const red = (await ofKey("#d00", "key-a")).data;
    const blue = (await ofKey("#00d", "key-a")).data;
    assert.equal(writtenOver(), 0);
    assert.notDeepEqual(blue, red);
    assert.deepEqual(blue, (await ofKey("#00d", "key-fresh-asset")).data, "as in a window of its own");
  });

  it("<meta http-equiv>: a document with one is not written over (its Content-Security-Policy would hold for the next)", async () => {
    await render(`<head><meta http-equiv="Content-Security-Policy" content="img-src 'none'"></head><p>strict</p>`);
    await render('<img src="https://csp.test/allowed.svg">');
    assert.equal(writtenOver(), 0);
    assert.equal(requestsTo("/allowed.svg").length, 1, "the next document's image was loaded");
  });

  it("a referrer policy: a document with one is not written over", async () => {
    await render('<head><meta name="referrer" content="no-referrer"></head><p>private</p>');
    await render('<img src="https://referrer.test/named.svg">');
    assert.equal(writtenOver(), 0);
    refererOf(requestsTo("/named.svg")[0]);
  });

  it("<base>: the next document resolves its URLs against its own address", async () => {
    await render('<head><base href="https://elsewhere.test/"></head><p>based</p>');
    const html = '<img src="assets/mark.svg">';
    await render(html, { assets: new Map([["mark.svg", Buffer.from(svg("#555"))]]), options: { failOnResourceError: true } });
    assert.equal(writtenOver(), 1, "a <base> leaves nothing: the job was written over it");
    assert.deepEqual(seen, [], "nothing was asked of elsewhere.test: the asset came from the document's own address");
  });

  it("form state: the next document's controls show its own values", async () => {
    const form = (values: string) => `<form style="font:16px sans-serif">${values}</form>`;
    const filled = form(
      '<input name="q" value="typed by a"><input type="checkbox" name="c" checked><textarea name="t">text of a</textarea><select name="s"><option>1</option><option selected>2</option></select>',
    );
    const empty = form(
      '<input name="q"><input type="checkbox" name="c"><textarea name="t"></textarea><select name="s"><option>1</option><option>2</option></select>',
    );
    const shot = (keyId: string, html = empty) => engine.render({ kind: "png", html, keyId, options: { imageWidth: 400, imageHeight: 80 } });
    await shot("key-a", filled);
    writtenBefore = engine.stats().writtenOver;
    const over = (await shot("key-a")).data;
    assert.equal(writtenOver(), 1);
    assert.deepEqual(over, (await shot("key-fresh-form")).data, "as in a window of its own");
  });

  it("the URL and origin: only a document no one outside has seen is written over, so each origin is seen by one job at most", async () => {
    await render('<img src="https://origins.test/first.svg">');
    writtenBefore = engine.stats().writtenOver;
    await render("<p>asks for nothing</p>");
    await render('<img src="https://origins.test/second.svg">');
    await render('<img src="https://origins.test/third.svg">');
    assert.equal(writtenOver(), 1, "only the job after the one that asked for nothing was written over");
    const [first, second, third] = ["/first.svg", "/second.svg", "/third.svg"].map((path) => refererOf(requestsTo(path)[0]));
    assert.notEqual(second, first);
    assert.notEqual(third, second);
  });

  it("a media query: a document is not kept through a change of viewport, which could make it load what it had not asked for", async () => {
    const shot = (html: string, width: number) => engine.render({ kind: "png", html, keyId: "key-a", options: { imageWidth: width, imageHeight: 100 } });
    await shot("<style>@media (min-width: 600px) { body { background: url(https://media.test/wide.svg) } }</style><p>narrow</p>", 400);
    writtenBefore = engine.stats().writtenOver;
    await shot("<p>the next job, wider</p>", 800);
    assert.deepEqual(requestsTo("/wide.svg"), [], "the last document never saw the wider viewport");
    assert.equal(writtenOver(), 0);
  });

  it("never writes over another key's document", async () => {
    await render("<p>key a</p>");
    writtenBefore = engine.stats().writtenOver;
    assert.doesNotMatch(pdfText(await render("<p>key b</p>", { keyId: "key-b" })), /key a/);
    assert.equal(writtenOver(), 0);
  });
});

/**
 * The engine does not trust its classification for safety: a job it runs as script-free has
 * script execution off. Here a Slot is told a document with script is script-free, as a
 * classification that missed something would: none of its script runs.
 */
describe("render engine: a script-free job runs with script execution off", () => {
  let browser: Browser;
  let slot: Slot;
  before(async () => {
    const settings = engineSettings({ executablePath: process.env.CHROMIUM_PATH, slots: 1 });
    browser = await openChromium(settings.launch);
    const session = await browser.target().createCDPSession();
    slot = await Slot.open({ ...settings.slot, browser: session, onGone: (s) => s.markBroken(new RenderFailure("crashed", "gone")) });
  });
  after(() => browser?.close());

  const SCRIPTED = `<p id="out">document</p><script>out.append(" SCRIPT-RAN")</script>
<img src="data:," onerror="out.append(' HANDLER-RAN')"><svg onload="out.append(' SVG-RAN')"></svg>`;

  async function run(scriptFree: boolean): Promise<string> {
    const output = await slot.run(SCRIPTED, "pdf", layoutOf({ html: SCRIPTED, kind: "pdf" }), { ms: 10_000, namedMs: 10_000 }, { scriptFree });
    await slot.wipe();
    return pdfText(output.data);
  }

  it("runs none of the document's script, handlers included", async () => {
    const scripted = await run(false);
    for (const ran of ["SCRIPT-RAN", "HANDLER-RAN", "SVG-RAN"]) assert.ok(scripted.includes(ran), `with script on, ${ran} (otherwise the test proves nothing)`);
    const text = await run(true);
    assert.match(text, /document/);
    assert.doesNotMatch(text, /RAN/);
    assert.match(await run(false), /SCRIPT-RAN/, "script is on again for the next job with script");
  });
});

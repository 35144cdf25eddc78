import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import * as dns from "node:dns";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { NetGuardError } from "@pressroom/platform";
import { DEFAULT_CHROMIUM_PATH, RenderEngine, type SubresourceFetcher } from "../engine";
import { pdfText, tcpServer } from "../engine/test-helpers";
import { createSubresourceFetcher } from "./subresources";

const EXECUTABLE = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;

/** Test DNS: names that look public but answer with private addresses; the rest goes to the system resolver. */
const TEST_DNS: Record<string, string[]> = {
  "rebind.hostile.test": ["127.0.0.1"],
  "metadata.hostile.test": ["169.254.169.254"],
  "mapped.hostile.test": ["::ffff:127.0.0.1"],
  "lan.hostile.test": ["10.0.0.7"],
};
const testLookup = ((hostname: string, options: dns.LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => {
  const answers = TEST_DNS[hostname];
  if (!answers) return dns.lookup(hostname, options, callback);
  setImmediate(() => callback(null, answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))));
}) as unknown as typeof dns.lookup;

/**
 * Hostile documents against the engine with the fetcher production uses
 * (default policy: nothing but public addresses). A local server holds a
 * secret; no document may reach it, directly, by a name, by an IPv4-mapped
 * address, or by a redirect, and nothing of it may appear in the output.
 */
describe("hostile documents, through the production sub-request fetcher", () => {
  const SECRET = `secret-${randomBytes(8).toString("hex")}`;
  let secret: http.Server;
  let port: number;
  const secretHits: string[] = [];
  const outcomes = new Map<string, string>();
  let engine: RenderEngine;

  before(async () => {
    secret = http.createServer((req, res) => {
      secretHits.push(`${req.method} ${req.url}`);
      res.writeHead(200, { "content-type": "text/html", "access-control-allow-origin": "*" });
      res.end(`<p>${SECRET}</p>`);
    });
    await new Promise<void>((resolve) => secret.listen(0, "127.0.0.1", resolve));
    port = (secret.address() as AddressInfo).port;

    const production = createSubresourceFetcher({ lookup: testLookup });
    // Nothing public is reachable here, so this one host stands in for a
    // public server that answers with a redirect to wherever `to` says. Every
    // hop after it goes to the production fetcher.
    const fetcher: SubresourceFetcher = async (req) => {
      if (req.url.hostname === "cdn.public-stand-in.test") {
        outcomes.set(req.url.href, "302");
        return { status: 302, headers: { location: req.url.searchParams.get("to") ?? "/" }, body: Buffer.alloc(0) };
      }
      try {
        const response = await production(req);
        outcomes.set(req.url.href, String(response.status));
        return response;
      } catch (err) {
        outcomes.set(req.url.href, err instanceof NetGuardError ? "refused by the guard" : `failed: ${String(err)}`);
        throw err;
      }
    };
    engine = await RenderEngine.start({ executablePath: EXECUTABLE, slots: 1, deadlineMs: 15_000, subrequestTimeoutMs: 1_000, fetchSubresource: fetcher });
  });

  after(async () => {
    await engine?.close();
    secret?.closeAllConnections();
    await new Promise<void>((resolve) => secret?.close(() => resolve()));
  });

  /** Loads `url` every way a document can: image, stylesheet, frame, fetch, XHR, worker, font. */
  const everyWay = (url: string) => `
    <img src="${url}/img"><link rel="stylesheet" href="${url}/css"><iframe src="${url}/frame"></iframe>
    <style>@font-face { font-family: F; src: url("${url}/font.woff2"); } p { font-family: F, sans-serif; }</style>
    <p id="out">start</p>
    <script>
      fetch("${url}/fetch").then((r) => r.text()).then((t) => out.textContent += " fetch:" + t, () => out.textContent += " fetch refused");
      const x = new XMLHttpRequest(); x.open("GET", "${url}/xhr", false); try { x.send(); out.textContent += " xhr:" + x.responseText } catch (e) { out.textContent += " xhr refused" }
      new Worker(URL.createObjectURL(new Blob(['fetch("${url}/worker")'])));
    </script>`;

  // Named hosts use https: Chromium would upgrade or block their http:// sub-resources in an https document.
  const targets: [string, (port: number) => string][] = [
    ["127.0.0.1", (p) => `http://127.0.0.1:${p}`],
    ["localhost", (p) => `http://localhost:${p}`],
    ["[::ffff:127.0.0.1]", (p) => `http://[::ffff:127.0.0.1]:${p}`],
    ["169.254.169.254 (cloud metadata)", () => "http://169.254.169.254/latest/meta-data"],
    ["a public-looking name that resolves to 127.0.0.1", (p) => `https://rebind.hostile.test:${p}`],
    ["a public-looking name that resolves to ::ffff:127.0.0.1", (p) => `https://mapped.hostile.test:${p}`],
    ["a public-looking name that resolves to the metadata address", () => "https://metadata.hostile.test"],
    ["a public-looking name that resolves to a private address", () => "https://lan.hostile.test"],
  ];

  for (const [name, target] of targets) {
    it(`never reaches ${name}`, async () => {
      const url = target(port);
      const out = await engine.render({ kind: "pdf", html: everyWay(url) });
      const text = pdfText(out.data);
      assert.doesNotMatch(text, new RegExp(SECRET));
      assert.match(text, /fetch refused/);
      assert.match(text, /xhr refused/);
      const tried = [...outcomes].filter(([href]) => href.startsWith(new URL(url).origin));
      assert.ok(tried.length >= 4, `the fetcher was asked for the document's requests: ${tried.map(([h]) => h).join(", ")}`);
      for (const [href, outcome] of tried) assert.equal(outcome, "refused by the guard", href);
      assert.deepEqual(secretHits, []);
    });
  }

  it("re-checks every redirect hop: a public host redirecting to private addresses gets nothing", async () => {
    const hops = [`http://127.0.0.1:${port}/secret`, `http://rebind.hostile.test:${port}/secret`, "http://169.254.169.254/latest/meta-data/iam"];
    const html = hops
      .map((to, i) => `<img src="https://cdn.public-stand-in.test/logo${i}.png?to=${encodeURIComponent(to)}">
        <iframe src="https://cdn.public-stand-in.test/frame${i}?to=${encodeURIComponent(to)}"></iframe>`)
      .join("");
    const out = await engine.render({ kind: "pdf", html: `${html}<p>redirects</p>` });
    assert.doesNotMatch(pdfText(out.data), new RegExp(SECRET));
    for (const to of hops) assert.equal(outcomes.get(to), "refused by the guard", `the hop to ${to} was asked for and refused`);
    assert.deepEqual(secretHits, []);
  });

  it("shows no local file and no browser-internal page", async () => {
    const out = await engine.render({
      kind: "pdf",
      html: `<iframe src="file:///etc/passwd"></iframe><iframe src="chrome://version"></iframe><iframe src="view-source:file:///etc/passwd"></iframe>
        <img src="file:///etc/hostname"><link rel="stylesheet" href="chrome://resources/css/text_defaults.css">
        <p id="f">start</p><script>fetch("file:///etc/passwd").then(() => f.textContent = "file read", () => f.textContent = "file refused")</script>`,
    });
    const text = pdfText(out.data);
    assert.doesNotMatch(text, /root:|Chromium|User Agent|Command Line/);
    assert.match(text, /file refused/);
  });

  it("keeps serving after all of them", async () => {
    const out = await engine.render({ kind: "pdf", html: "<p>an ordinary invoice</p>" });
    assert.match(pdfText(out.data), /an ordinary invoice/);
  });
});

describe("a font server that never answers", () => {
  it("fails only that font: the render finishes in the fallback font", async () => {
    const silent = await tcpServer();
    // The test-only setting that lets documents reach loopback, so that the
    // dead server is really connected to.
    const engine = await RenderEngine.start({
      executablePath: EXECUTABLE,
      slots: 1,
      deadlineMs: 20_000,
      subrequestTimeoutMs: 1_000,
      fetchSubresource: createSubresourceFetcher({ allowLoopback: true }),
    });
    try {
      const out = await engine.render({
        kind: "pdf",
        html: `<style>@font-face { font-family: Dead; src: url("http://127.0.0.1:${silent.port}/dead.woff2"); } p { font-family: Dead, serif; }</style>
          <p>set in the fallback font</p>`,
      });
      assert.ok(silent.connections() >= 1, "the fetcher really connected to the dead server");
      assert.match(pdfText(out.data), /set in the fallback font/);
    } finally {
      await engine.close();
      await silent.close();
    }
  });
});

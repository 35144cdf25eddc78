import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import * as dns from "node:dns";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { NetGuardError } from "@pressroom/platform";
import { RenderFailure, type RenderEngine, type SubresourceFetcher } from "../engine";
import { pdfText, startEngine, tcpServer } from "../test-support/engine";
import { createSubresourceFetcher } from "./subresources";

/** Test DNS: names that look public but answer with private addresses; the rest goes to the system resolver. */
const TEST_DNS: Record<string, string[]> = {
  "rebind.hostile.test": ["127.0.0.1"],
  "metadata.hostile.test": ["169.254.169.254"],
  "mapped.hostile.test": ["::ffff:127.0.0.1"],
  "lan.hostile.test": ["10.0.0.7"],
};
const testLookup = ((
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => {
  const answers = TEST_DNS[hostname];
  if (!answers) return dns.lookup(hostname, options, callback);
  setImmediate(() =>
    callback(
      null,
      answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
    ),
  );
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

    // The secret server's port is allowed: what refuses each request here is the address guard.
    const production = createSubresourceFetcher({ lookup: testLookup, ports: [80, 443, port] });
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
    engine = await startEngine({ slots: 1, deadlineMs: 15_000, subrequestTimeoutMs: 1_000, fetchSubresource: fetcher });
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
      .map(
        (to, i) => `<img src="https://cdn.public-stand-in.test/logo${i}.png?to=${encodeURIComponent(to)}">
        <iframe src="https://cdn.public-stand-in.test/frame${i}?to=${encodeURIComponent(to)}"></iframe>`,
      )
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
    const engine = await startEngine({
      slots: 1,
      deadlineMs: 20_000,
      subrequestTimeoutMs: 1_000,
      fetchSubresource: createSubresourceFetcher({ allowLoopback: true, ports: [silent.port] }),
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

/**
 * The job's sub-resource budget is shared by its downloads while they run:
 * bytes are counted as they arrive (or all at once when a Content-Length
 * announces them), so downloads that never finish cannot hold more than the
 * budget between them, and bodies still arrive whole.
 */
describe("the production fetcher against the job's sub-resource budget", () => {
  const KIB = 1024;
  const text = (bytes: number, mark: string) => `${"x".repeat(bytes - mark.length)}${mark}`;
  let server: http.Server;
  let origin: string;
  let engine: RenderEngine;

  before(async () => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (url.pathname === "/bomb") {
        const coding = url.searchParams.get("coding") ?? "";
        res.writeHead(200, { "content-type": "text/plain", "access-control-allow-origin": "*", "content-encoding": coding.replace("raw-", "") });
        res.end(BOMBS[coding]);
        return;
      }
      const kib = Number(url.searchParams.get("kib"));
      const body = text(kib * KIB, `end-of-${url.pathname.slice(1)}`);
      const headers = { "content-type": "text/plain", "access-control-allow-origin": "*" };
      if (url.pathname === "/chunked") {
        res.writeHead(200, headers);
        for (let at = 0; at < body.length; at += 16 * KIB) res.write(body.slice(at, at + 16 * KIB));
        res.end();
      } else if (url.pathname === "/sized") {
        res.writeHead(200, { ...headers, "content-length": String(body.length) });
        res.end(body);
      } else if (url.pathname === "/stalls") {
        res.writeHead(200, headers);
        res.write(body);
      } else if (url.pathname === "/announces-too-much") {
        res.writeHead(200, { ...headers, "content-length": String(kib * KIB) });
        res.write("a few bytes");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    engine = await startEngine({
      slots: 1,
      deadlineMs: 20_000,
      // Longer than the deadline: a job that waited for its stalled downloads would fail "deadline".
      subrequestTimeoutMs: 60_000,
      subresourceBudgetBytes: 1024 * KIB,
      fetchSubresource: createSubresourceFetcher({ allowLoopback: true, ports: [Number(new URL(origin).port)] }),
    });
  });

  after(async () => {
    await engine?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  /** Reads each body with a synchronous XHR (the document's load waits for it) and shows its length and whether it is intact. */
  const readEach = (paths: string[]) => `<p id="out">read</p><script>
    for (const path of ${JSON.stringify(paths)}) {
      const x = new XMLHttpRequest(); x.open("GET", "${origin}" + path, false); x.send();
      out.textContent += " " + x.responseText.length + (/^x*end-of-[a-z]+$/.test(x.responseText) ? " intact" : " damaged");
    }
  </script>`;
  /** Loads every path at once as an image: the document's load waits for them all. */
  const imagesOf = (paths: string[]) => paths.map((path) => `<img src="${origin}${path}">`).join("");

  it("hands Chromium every body whole, with or without a Content-Length", async () => {
    const out = await engine.render({ kind: "pdf", html: readEach(["/sized?kib=300", "/chunked?kib=300", "/sized?kib=1"]) });
    assert.match(pdfText(out.data).replace(/\s+/g, " "), new RegExp(`read ${300 * KIB} intact ${300 * KIB} intact ${KIB} intact`));
  });

  it("fails the job as soon as downloads still running add up to more than the budget", async () => {
    await assert.rejects(
      engine.render({ kind: "pdf", html: imagesOf(["/stalls?kib=600&n=1", "/stalls?kib=600&n=2"]) }),
      (err: unknown) => err instanceof RenderFailure && err.reason === "resource_budget",
    );
  });

  it("fails the job on a Content-Length the budget cannot hold, before the body arrives", async () => {
    await assert.rejects(
      engine.render({ kind: "pdf", html: imagesOf(["/announces-too-much?kib=2048"]) }),
      (err: unknown) => err instanceof RenderFailure && err.reason === "resource_budget",
    );
  });

  // Each decodes to 32 MiB from a few KiB: charged at its compressed size, it would pass the 1 MiB budget.
  const BOMBS: Record<string, Buffer> = {
    gzip: gzipSync(Buffer.alloc(32 * 1024 * KIB)),
    deflate: deflateSync(Buffer.alloc(32 * 1024 * KIB)),
    "raw-deflate": deflateRawSync(Buffer.alloc(32 * 1024 * KIB)),
    br: brotliCompressSync(Buffer.alloc(32 * 1024 * KIB)),
    "gzip, br": brotliCompressSync(gzipSync(Buffer.alloc(32 * 1024 * KIB))),
  };
  for (const coding of Object.keys(BOMBS)) {
    it(`fails the job on a ${coding} decompression bomb, naming the budget`, async () => {
      await assert.rejects(
        engine.render({ kind: "pdf", html: readEach([`/bomb?coding=${encodeURIComponent(coding)}`]) }),
        (err: unknown) => err instanceof RenderFailure && err.reason === "resource_budget" && /more than 1 MiB \(the sub-resource budget\)/.test(err.message),
      );
    });
  }

  it("fails the job on sixteen deflate bombs at once: they share the one budget", async () => {
    const bombs = Array.from({ length: 16 }, (_, i) => `<img src="${origin}/bomb?coding=deflate&n=${i}">`).join("");
    await assert.rejects(
      engine.render({ kind: "pdf", html: bombs }),
      (err: unknown) => err instanceof RenderFailure && err.reason === "resource_budget" && /more than 1 MiB \(the sub-resource budget\)/.test(err.message),
    );
  });

  it("renders again afterwards", async () => {
    const out = await engine.render({ kind: "pdf", html: "<p>after the budget</p>" });
    assert.match(pdfText(out.data), /after the budget/);
  });
});

/**
 * Documents reach only the allowed ports (RENDER_SUBRESOURCE_PORTS, 80 and 443
 * by default), so they cannot speak HTTP to a public mail or Redis server:
 * any other port is the fetcher's own refusal, before anything is resolved or
 * connected.
 */
describe("the ports a sub-request may reach", () => {
  let server: { port: number; connections(): number; close(): Promise<void> };
  const budget = { take: () => undefined };

  before(async () => {
    server = await tcpServer();
  });
  after(() => server?.close());

  const get = (fetcher: SubresourceFetcher, url: string) =>
    fetcher({ url: new URL(url), method: "GET", headers: {}, signal: AbortSignal.timeout(1_000), budget });

  it("refuses any port but 80 and 443 by default, naming it, without connecting", async () => {
    const fetcher = createSubresourceFetcher({ allowLoopback: true });
    for (const url of [`http://127.0.0.1:${server.port}/`, "http://smtp.example.com:25/", "https://redis.example.com:6379/"]) {
      await assert.rejects(get(fetcher, url), (err: unknown) => {
        assert.ok(err instanceof NetGuardError, String(err));
        assert.match(err.message, new RegExp(`port ${new URL(url).port} is not allowed \\(allowed: 80, 443\\)`));
        return true;
      });
    }
    assert.equal(server.connections(), 0);
  });

  it("reaches a port the setting adds", async () => {
    const fetcher = createSubresourceFetcher({ allowLoopback: true, ports: [80, 443, server.port] });
    await assert.rejects(get(fetcher, `http://127.0.0.1:${server.port}/`), (err: unknown) => !(err instanceof NetGuardError));
    assert.ok(server.connections() >= 1, "the fetcher connected");
  });
});

/**
 * A body the budget refuses fails its sub-request even when its response has
 * already ended: the refusal is the fetcher's answer, and whatever had arrived
 * is never handed to Chromium as the whole body.
 */
describe("a body refused as it arrives", () => {
  it("fails a body the budget refuses even when the response has ended with it", async () => {
    // Chunked (no Content-Length), so the budget sees the body in its one data event, with the end right behind.
    const small = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("a whole body in one chunk");
    });
    await new Promise<void>((resolve) => small.listen(0, "127.0.0.1", resolve));
    const smallPort = (small.address() as AddressInfo).port;
    const refusing = {
      take: () => {
        throw new Error("over the job's budget");
      },
    };
    try {
      const fetcher = createSubresourceFetcher({ allowLoopback: true, ports: [smallPort] });
      for (let round = 0; round < 3; round++) {
        const request = { url: new URL(`http://127.0.0.1:${smallPort}/`), method: "GET", headers: {}, signal: AbortSignal.timeout(1_000), budget: refusing };
        await assert.rejects(fetcher(request), /over the job's budget/);
      }
    } finally {
      small.closeAllConnections();
      await new Promise<void>((resolve) => small.close(() => resolve()));
    }
  });
});

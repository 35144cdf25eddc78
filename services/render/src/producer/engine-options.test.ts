import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { RenderFailure, type RenderEngine } from "../engine";
import { pdfInfo, pdfText, startEngine } from "../test-support/engine";
import { createSubresourceFetcher } from "./subresources";

/** The engine with a request's options (as the producer hands them over), on real Chromium and a real local web server. */
describe("render engine: a request's options", () => {
  let engine: RenderEngine;
  let server: http.Server;
  let origin: string;
  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/page") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(`<!doctype html><html><head><title>t</title></head><body><p>fetched page</p><img src="pic.svg"></body></html>`);
      } else if (req.url === "/pic.svg") {
        setTimeout(() => {
          res.writeHead(200, { "content-type": "image/svg+xml" });
          res.end(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`);
        }, 1_500);
      } else if (req.url?.startsWith("/hop")) {
        res.writeHead(302, { location: "/page" });
        res.end();
      } else if (req.url === "/json") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    origin = `http://127.0.0.1:${port}`;
    engine = await startEngine({ slots: 1, fetchSubresource: createSubresourceFetcher({ allowLoopback: true, ports: [port] }) });
  });
  after(async () => {
    await engine.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("waits for a selector, an expression, a delay and an idle network", async () => {
    const late = `<p id="out">early</p><script>setTimeout(() => { document.getElementById("out").textContent = "late"; window.done = true; }, 300)</script>`;
    for (const waitFor of [{ expression: "window.done === true" }, { delayMs: 600 }] as const) {
      const out = await engine.render({ kind: "pdf", html: late, options: { waitFor } });
      assert.match(pdfText(out.data), /late/, JSON.stringify(waitFor));
    }
    const appears = `<script>setTimeout(() => { const p = document.createElement("p"); p.id = "ready"; p.textContent = "appeared"; document.body.append(p); }, 300)</script>`;
    assert.match(
      pdfText((await engine.render({ kind: "pdf", html: `<body>${appears}</body>`, options: { waitFor: { selector: "#ready" } } })).data),
      /appeared/,
    );
    const fetching = `<p id="out">waiting</p><script>addEventListener("load", () => setTimeout(() => { const img = new Image(); img.onload = () => { document.getElementById("out").textContent = "fetched"; }; img.src = "${origin}/pic.svg"; }, 100))</script>`;
    assert.match(pdfText((await engine.render({ kind: "pdf", html: fetching })).data), /waiting/, "without waiting, the image is still loading");
    assert.match(pdfText((await engine.render({ kind: "pdf", html: fetching, options: { waitFor: { networkIdle: true } } })).data), /fetched/);
  });

  it("fails a condition that is not met within the deadline, naming it", async () => {
    await assert.rejects(
      engine.render({ kind: "pdf", html: "<p>never</p>", options: { waitFor: { selector: "#never" } }, deadlineMs: 2_000 }),
      (err: unknown) => err instanceof RenderFailure && err.reason === "not_ready" && /wait_for selector "#never" was not met/.test(err.message),
    );
    await assert.rejects(
      engine.render({ kind: "pdf", html: "<p>x</p>", options: { waitFor: { selector: "p[" } } }),
      (err: unknown) => err instanceof RenderFailure && err.reason === "invalid_document" && /not a valid CSS selector/.test(err.message),
    );
  });

  it("lays the document out for the screen medium when asked, and for print otherwise", async () => {
    const html = `<style>.s{display:none} @media screen {.s{display:block} .p{display:none}}</style><p class="s">screen medium</p><p class="p">print medium</p>`;
    assert.match(pdfText((await engine.render({ kind: "pdf", html, options: { media: "screen" } })).data), /screen medium/);
    assert.match(pdfText((await engine.render({ kind: "pdf", html })).data), /print medium/);
  });

  it("prints only the asked pages, at the asked scale", async () => {
    const html = [1, 2, 3, 4].map((n) => `<p style="break-after:page">page ${n}</p>`).join("");
    const out = await engine.render({ kind: "pdf", html, options: { pageRanges: "2-3" } });
    assert.equal(pdfInfo(out.data).pages, 2);
    assert.match(pdfText(out.data), /page 2[\s\S]*page 3/);
    assert.doesNotMatch(pdfText(out.data), /page 1|page 4/);
  });

  it("captures jpeg and webp, and a transparent png", async () => {
    const html = `<p>x</p>`;
    const jpeg = await engine.render({ kind: "png", html, options: { imageWidth: 40, imageHeight: 20, imageFormat: "jpeg", quality: 50 } });
    assert.equal(jpeg.contentType, "image/jpeg");
    assert.deepEqual([...jpeg.data.subarray(0, 3)], [0xff, 0xd8, 0xff]);
    const webp = await engine.render({ kind: "png", html, options: { imageWidth: 40, imageHeight: 20, imageFormat: "webp" } });
    assert.equal(webp.contentType, "image/webp");
    assert.equal(Buffer.from(webp.data.subarray(8, 12)).toString("latin1"), "WEBP");
    const png = await engine.render({ kind: "png", html, options: { imageWidth: 40, imageHeight: 20, omitBackground: true } });
    assert.equal(png.contentType, "image/png");
    assert.equal(png.data[25], 6, "colour type 6: RGBA");
    const opaque = await engine.render({ kind: "png", html, options: { imageWidth: 40, imageHeight: 20 } });
    assert.notEqual(opaque.data[25], 6, "the next capture is opaque again");
  });

  it("fetches a url's page through the guard, following a redirect, with its relative sub-resources", async () => {
    const html = await engine.fetchPage(`${origin}/hop`, { timeoutMs: 5_000 });
    assert.match(html, new RegExp(`<head><base href="${origin}/page">`));
    const out = await engine.render({ kind: "pdf", html, options: { waitFor: { networkIdle: true } } });
    assert.match(pdfText(out.data), /fetched page/);
    const refused = (pattern: RegExp) => (err: unknown) => err instanceof RenderFailure && err.reason === "source_unavailable" && pattern.test(err.message);
    await assert.rejects(engine.fetchPage(`${origin}/missing`, { timeoutMs: 5_000 }), refused(/answered HTTP 404/));
    await assert.rejects(engine.fetchPage(`${origin}/json`, { timeoutMs: 5_000 }), refused(/application\/json, not an HTML page/));
  });
});

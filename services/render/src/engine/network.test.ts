import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { assetContentType, decideRequest, decodeBody, fetcherRequestHeaders, responseHeaders, responseStatus, type JobFacts } from "./network";

describe("network policy", () => {
  const job = { documentUrl: "https://abc.document.pressroom.invalid/" };

  it("loads nothing into the main frame, the document's own URL included: the document is written into its page", () => {
    assert.deepEqual(decideRequest({ url: job.documentUrl, resourceType: "Document", isMainFrame: true }, job), { kind: "block", navigation: true });
    assert.deepEqual(decideRequest({ url: job.documentUrl, resourceType: "Document", isMainFrame: false }, job), { kind: "not_found" });
  });

  it("blocks top-level navigations and other schemes", () => {
    assert.deepEqual(decideRequest({ url: "https://evil.test/", resourceType: "Document", isMainFrame: true }, job), { kind: "block", navigation: true });
    for (const url of [
      "file:///etc/passwd",
      "chrome://settings",
      "chrome-extension://x/y",
      "ftp://x/",
      "ws://127.0.0.1:1/",
      "wss://x/",
      "javascript:1",
      "gopher://x",
    ]) {
      assert.deepEqual(decideRequest({ url, resourceType: "Other", isMainFrame: false }, job), { kind: "block", navigation: false }, url);
    }
  });

  it("never reaches other jobs' origins", () => {
    assert.deepEqual(decideRequest({ url: "https://other.document.pressroom.invalid/x", resourceType: "Image", isMainFrame: false }, job), {
      kind: "block",
      navigation: false,
    });
    assert.deepEqual(decideRequest({ url: "https://pressroom.invalid/", resourceType: "Image", isMainFrame: false }, job), {
      kind: "block",
      navigation: false,
    });
  });

  it("answers the job's own assets at assets/<name> of its origin, and nothing else there", () => {
    const withAssets = {
      ...job,
      assets: new Map([
        ["logo.png", new Uint8Array([1])],
        ["brand font.woff2", new Uint8Array([2])],
      ]),
    };
    const at = (path: string, facts: JobFacts = withAssets) =>
      decideRequest({ url: `https://abc.document.pressroom.invalid${path}`, resourceType: "Image", isMainFrame: false }, facts);
    assert.deepEqual(at("/assets/logo.png"), { kind: "asset", name: "logo.png" });
    assert.deepEqual(at("/assets/brand%20font.woff2"), { kind: "asset", name: "brand font.woff2" });
    assert.deepEqual(at("/assets/other.png"), { kind: "not_found" });
    assert.deepEqual(at("/assets/%E0%A4%A"), { kind: "not_found" });
    assert.deepEqual(at("/assets/sub/logo.png"), { kind: "not_found" });
    assert.deepEqual(at("/logo.png"), { kind: "not_found" });
    assert.deepEqual(at("/assets/logo.png", job), { kind: "not_found" });
    // Another origin's assets/ path is an ordinary sub-request, never the job's assets.
    assert.equal(decideRequest({ url: "https://cdn.test/assets/logo.png", resourceType: "Image", isMainFrame: false }, withAssets).kind, "fetch");
    assert.equal(assetContentType("brand.WOFF2"), "font/woff2");
    assert.equal(assetContentType("style.css"), "text/css; charset=utf-8");
    assert.equal(assetContentType("data.bin"), "application/octet-stream");
  });

  it("hands http(s) sub-resources to the fetcher and lets data:/blob: through", () => {
    const d = decideRequest({ url: "http://127.0.0.1:8080/x.png", resourceType: "Image", isMainFrame: false }, job);
    assert.equal(d.kind, "fetch");
    assert.equal(decideRequest({ url: "data:image/png;base64,AA==", resourceType: "Image", isMainFrame: false }, job).kind, "continue");
    assert.equal(decideRequest({ url: "https://x.test/", resourceType: "Image", isMainFrame: false }, undefined).kind, "block");
  });

  it("strips stateful and encoding headers and forbids caching", () => {
    const headers = responseHeaders({
      "Content-Type": "image/png",
      "Strict-Transport-Security": "max-age=1",
      "Content-Encoding": "gzip",
      "Alt-Svc": 'h3=":443"',
      "Set-Cookie": "a=1\nb=2",
      "Cache-Control": "max-age=3600",
    });
    assert.deepEqual(headers, [
      { name: "content-type", value: "image/png" },
      { name: "set-cookie", value: "a=1" },
      { name: "set-cookie", value: "b=2" },
      { name: "cache-control", value: "no-store" },
    ]);
    assert.equal(responseStatus(302), 302);
    assert.equal(responseStatus(99), 502);
  });
});

describe("content encoding", () => {
  it("asks only for encodings it can decode", () => {
    assert.deepEqual(fetcherRequestHeaders({ "Accept-Encoding": "gzip, deflate, br, zstd", Accept: "*/*" }), {
      Accept: "*/*",
      "Accept-Encoding": "gzip, deflate, br",
    });
  });

  const none = () => undefined;
  const text = Buffer.from("hello encoded world");

  it("decodes what the fetcher returns still encoded (Chromium would not)", async () => {
    assert.deepEqual(await decodeBody({ "Content-Encoding": "gzip" }, gzipSync(text), none), text);
    assert.deepEqual(await decodeBody({ "content-encoding": "br" }, brotliCompressSync(text), none), text);
    assert.deepEqual(await decodeBody({ "content-encoding": "deflate" }, deflateSync(text), none), text);
    assert.deepEqual(await decodeBody({ "content-encoding": "deflate" }, deflateRawSync(text), none), text);
    assert.deepEqual(await decodeBody({ "content-encoding": "gzip, br" }, brotliCompressSync(gzipSync(text)), none), text);
    assert.deepEqual(await decodeBody({}, text, none), text);
    await assert.rejects(decodeBody({ "content-encoding": "zstd" }, text, none), /unsupported content-encoding zstd/);
    // Refused before any layer is inflated, wherever the coding it cannot undo stands.
    let inflated = 0;
    await assert.rejects(
      decodeBody({ "content-encoding": "zstd, gzip" }, gzipSync(text), (bytes) => (inflated += bytes)),
      /unsupported content-encoding zstd/,
    );
    assert.equal(inflated, 0);
    await assert.rejects(decodeBody({ "content-encoding": "gzip, gzip, gzip, gzip" }, text, none), /more than 3 stacked/);
  });

  it("stops a decompression bomb past MAX_DECODED_BYTES even without a budget", async () => {
    await assert.rejects(decodeBody({ "content-encoding": "gzip" }, gzipSync(Buffer.alloc(65 * 1024 * 1024)), none), /decodes to more than/);
  });

  const MIB = 1024 * 1024;
  const bomb = Buffer.alloc(40 * MIB);
  const bombs: [string, string, Buffer][] = [
    ["gzip", "gzip", gzipSync(bomb)],
    ["zlib-wrapped deflate", "deflate", deflateSync(bomb)],
    ["raw deflate", "deflate", deflateRawSync(bomb)],
    ["br", "br", brotliCompressSync(bomb)],
    ["stacked gzip and br", "gzip, br", brotliCompressSync(gzipSync(bomb))],
  ];
  for (const [name, coding, body] of bombs) {
    it(`stops inflating a ${name} bomb as soon as the count refuses, while streaming`, async () => {
      let counted = 0;
      const refused = new Error("budget spent");
      await assert.rejects(
        decodeBody({ "content-encoding": coding }, body, (bytes) => {
          counted += bytes;
          if (counted > MIB) throw refused;
        }),
        (err: unknown) => err === refused,
      );
      // One decoder chunk (64 KiB at most) past the limit, not the 40 MiB the body inflates to.
      assert.ok(counted <= MIB + 64 * 1024, `${counted} bytes inflated`);
    });
  }
});

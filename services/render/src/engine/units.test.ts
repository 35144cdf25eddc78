import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { sweepAbandonedProfiles } from "./chromium";
import { FifoSemaphore } from "./fifo";
import { gzipSync, brotliCompressSync, deflateSync } from "node:zlib";
import { decideRequest, decodeBody, fetcherRequestHeaders, responseHeaders, responseStatus } from "./network";
import { cssLengthToInches, layoutOf } from "./paper";
import { countPdfPages } from "./pdf";
import { estimatedPagesOverCap } from "./slot";
import { RenderFailure } from "./types";

describe("sweepAbandonedProfiles", () => {
  it("removes the profile directories of processes that are gone, and nothing else", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "profile-sweep-"));
    try {
      const gone = spawnSync(process.execPath, ["-e", ""]).pid;
      const names = {
        gone: `pressroom-chromium-${gone}-Ab12Cd`,
        ours: `pressroom-chromium-${process.pid}-Ef34Gh`,
        init: "pressroom-chromium-1-Ij56Kl",
        unnamed: "pressroom-chromium-Mn78Op",
        other: "something-else-1-Qr90St",
      };
      for (const name of Object.values(names)) mkdirSync(path.join(dir, name, "Default"), { recursive: true });
      writeFileSync(path.join(dir, names.gone, "Default", "Cookies"), "x");

      assert.deepEqual(await sweepAbandonedProfiles(dir), [names.gone]);
      assert.deepEqual(readdirSync(dir).sort(), [names.init, names.ours, names.other, names.unnamed].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("countPdfPages", () => {
  it("counts /Type /Page objects and not the /Pages tree", () => {
    const pdf = Buffer.from(
      "%PDF-1.4\n1 0 obj <</Type /Pages /Kids [2 0 R 3 0 R] /Count 2>> endobj\n" +
        "2 0 obj <</Type /Page /Parent 1 0 R>> endobj\n3 0 obj <</Type/Page/Parent 1 0 R>> endobj\n" +
        "4 0 obj <</Type /PageLabel>> endobj\n%%EOF",
    );
    assert.equal(countPdfPages(pdf), 2);
  });

  it("is zero for something that is not a PDF", () => {
    assert.equal(countPdfPages(new Uint8Array([1, 2, 3])), 0);
  });
});

describe("paper", () => {
  it("converts CSS lengths to inches", () => {
    assert.equal(cssLengthToInches("1in", "m"), 1);
    assert.equal(cssLengthToInches("96px", "m"), 1);
    assert.equal(cssLengthToInches("25.4mm", "m"), 1);
    assert.equal(cssLengthToInches("72pt", "m"), 1);
    assert.equal(cssLengthToInches("", "m"), 0);
    assert.equal(cssLengthToInches("12", "m"), 12 / 96);
    assert.throws(() => cssLengthToInches("1em", "marginTop"), (err: unknown) => err instanceof RenderFailure && err.reason === "invalid_document" && /marginTop/.test(err.message));
  });

  it("derives print parameters and the viewport from page settings", () => {
    const layout = layoutOf({
      html: "",
      kind: "pdf",
      page: { format: "A4", landscape: true, marginTop: "10mm", marginRight: "10mm", marginBottom: "10mm", marginLeft: "10mm", headerTemplate: "", footerTemplate: "<span class=pageNumber></span>" },
    });
    assert.equal(layout.print?.landscape, true);
    assert.equal(layout.print?.preferCSSPageSize, false);
    assert.equal(layout.print?.displayHeaderFooter, true);
    assert.equal(layout.print?.headerTemplate, "<span></span>", "an empty header must not become Chromium's default one");
    assert.ok(layout.viewport.width > layout.viewport.height, "landscape content area");
  });

  it("lets raw HTML choose its own page size", () => {
    const layout = layoutOf({ html: "", kind: "pdf" });
    assert.equal(layout.print?.preferCSSPageSize, true);
    assert.equal(layout.print?.displayHeaderFooter, false);
  });

  it("refuses impossible jobs as invalid_document", () => {
    const invalid = (err: unknown) => err instanceof RenderFailure && err.reason === "invalid_document" && !err.retryable;
    assert.throws(() => layoutOf({ html: "", kind: "png" }), invalid);
    assert.throws(() => layoutOf({ html: "", kind: "png", image: { width: 0, height: 10 } }), invalid);
    assert.throws(() => layoutOf({ html: "", kind: "png", image: { width: 10, height: 10, deviceScaleFactor: 3 as 2 } }), invalid);
    assert.throws(
      () => layoutOf({ html: "", kind: "pdf", page: { format: "B7", landscape: false, marginTop: "", marginRight: "", marginBottom: "", marginLeft: "", headerTemplate: "", footerTemplate: "" } }),
      invalid,
    );
    assert.throws(
      () => layoutOf({ html: "", kind: "pdf", page: { format: "A6", landscape: false, marginTop: "3in", marginRight: "", marginBottom: "3in", marginLeft: "", headerTemplate: "", footerTemplate: "" } }),
      invalid,
    );
  });
});

describe("network policy", () => {
  const job = { documentUrl: "https://abc.document.pressroom.invalid/", documentServed: false };
  const served = { ...job, documentServed: true };

  it("serves the document once, to the main frame only", () => {
    assert.deepEqual(decideRequest({ url: job.documentUrl, resourceType: "Document", isMainFrame: true }, job), { kind: "document" });
    assert.deepEqual(decideRequest({ url: job.documentUrl, resourceType: "Document", isMainFrame: true }, served), { kind: "block", navigation: true });
    assert.deepEqual(decideRequest({ url: job.documentUrl, resourceType: "Document", isMainFrame: false }, job), { kind: "not_found" });
  });

  it("blocks top-level navigations and other schemes", () => {
    assert.deepEqual(decideRequest({ url: "https://evil.test/", resourceType: "Document", isMainFrame: true }, served), { kind: "block", navigation: true });
    for (const url of ["file:///etc/passwd", "chrome://settings", "chrome-extension://x/y", "ftp://x/", "ws://127.0.0.1:1/", "wss://x/", "javascript:1", "gopher://x"]) {
      assert.deepEqual(decideRequest({ url, resourceType: "Other", isMainFrame: false }, served), { kind: "block", navigation: false }, url);
    }
  });

  it("never reaches other jobs' origins", () => {
    assert.deepEqual(decideRequest({ url: "https://other.document.pressroom.invalid/x", resourceType: "Image", isMainFrame: false }, served), { kind: "block", navigation: false });
    assert.deepEqual(decideRequest({ url: "https://pressroom.invalid/", resourceType: "Image", isMainFrame: false }, served), { kind: "block", navigation: false });
  });

  it("hands http(s) sub-resources to the fetcher and lets data:/blob: through", () => {
    const d = decideRequest({ url: "http://127.0.0.1:8080/x.png", resourceType: "Image", isMainFrame: false }, served);
    assert.equal(d.kind, "fetch");
    assert.equal(decideRequest({ url: "data:image/png;base64,AA==", resourceType: "Image", isMainFrame: false }, served).kind, "continue");
    assert.equal(decideRequest({ url: "https://x.test/", resourceType: "Image", isMainFrame: false }, undefined).kind, "block");
  });

  it("strips stateful and encoding headers and forbids caching", () => {
    const headers = responseHeaders({
      "Content-Type": "image/png",
      "Strict-Transport-Security": "max-age=1",
      "Content-Encoding": "gzip",
      "Alt-Svc": "h3=\":443\"",
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
    assert.deepEqual(fetcherRequestHeaders({ "Accept-Encoding": "gzip, deflate, br, zstd", Accept: "*/*" }), { Accept: "*/*", "Accept-Encoding": "gzip, deflate, br" });
  });

  it("decodes what the fetcher returns still encoded (Chromium would not)", async () => {
    const text = Buffer.from("hello encoded world");
    assert.deepEqual(await decodeBody({ "Content-Encoding": "gzip" }, gzipSync(text)), text);
    assert.deepEqual(await decodeBody({ "content-encoding": "br" }, brotliCompressSync(text)), text);
    assert.deepEqual(await decodeBody({ "content-encoding": "deflate" }, deflateSync(text)), text);
    assert.deepEqual(await decodeBody({}, text), text);
    await assert.rejects(decodeBody({ "content-encoding": "zstd" }, text));
  });

  it("stops a decompression bomb", async () => {
    await assert.rejects(decodeBody({ "content-encoding": "gzip" }, gzipSync(Buffer.alloc(65 * 1024 * 1024))));
  });
});

describe("page estimate", () => {
  it("only fails fast when the estimate is well over the cap", () => {
    assert.equal(estimatedPagesOverCap({ height: 1000 * 600, breaks: 0 }, 1000, 500), false);
    assert.equal(estimatedPagesOverCap({ height: 1000 * 10_000, breaks: 0 }, 1000, 500), true);
    assert.equal(estimatedPagesOverCap({ height: 100, breaks: 10_000 }, 1000, 500), true);
  });
});

describe("FifoSemaphore", () => {
  it("serves waiters in arrival order and skips aborted ones", async () => {
    const sem = new FifoSemaphore(1);
    const order: string[] = [];
    const first = await sem.acquire();
    const controller = new AbortController();
    const b = sem.acquire().then((release) => {
      order.push("b");
      release();
    });
    const aborted = sem.acquire(controller.signal).then(
      () => order.push("aborted"),
      () => order.push("aborted-rejected"),
    );
    const c = sem.acquire().then((release) => {
      order.push("c");
      release();
    });
    controller.abort();
    first();
    await Promise.all([b, c, aborted]);
    assert.deepEqual(order, ["aborted-rejected", "b", "c"]);
    assert.equal(sem.inUse, 0);
  });
});

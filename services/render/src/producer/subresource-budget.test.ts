import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { after, before, describe, it } from "node:test";
import { RenderFailure, type RenderEngine, type SubresourceFetcher } from "../engine";
import { pdfText, startEngine } from "../test-support/engine";

const KIB = 1024;

/** A valid SVG image of about `bytes` bytes (a long comment inside). */
const svgOf = (bytes: number) => Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><!--${"x".repeat(bytes)}--></svg>`);

/**
 * A job's sub-resources share one byte budget (decoded bytes, what Chromium
 * is handed): a document whose images add up to more fails as the
 * document's fault, naming the budget, even when each image alone is small
 * or arrives compressed.
 */
describe("the sub-resource budget of a job", () => {
  let engine: RenderEngine;
  const fetcher: SubresourceFetcher = async ({ url }) => {
    const size = Number(url.searchParams.get("kib") ?? "1") * KIB;
    const headers: Record<string, string> = { "content-type": "image/svg+xml" };
    if (url.pathname === "/gz.svg") return { status: 200, headers: { ...headers, "content-encoding": "gzip" }, body: gzipSync(svgOf(size)) };
    return { status: 200, headers, body: svgOf(size) };
  };

  before(async () => {
    engine = await startEngine({
      slots: 1,
      deadlineMs: 20_000,
      subresourceBudgetBytes: 1024 * KIB,
      fetchSubresource: fetcher,
    });
  });
  after(() => engine?.close());

  const images = (count: number, kib: number, path = "/img.svg") =>
    Array.from({ length: count }, (_, i) => `<img src="https://assets.test${path}?kib=${kib}&n=${i}">`).join("") + "<p>images</p>";

  it("renders a document whose sub-resources stay within the budget", async () => {
    const out = await engine.render({ kind: "pdf", html: images(4, 200) });
    assert.match(pdfText(out.data), /images/);
  });

  it("fails a document whose sub-resources add up to more than the budget, naming it", async () => {
    await assert.rejects(
      engine.render({ kind: "pdf", html: images(8, 200) }),
      (err: unknown) =>
        err instanceof RenderFailure && err.reason === "resource_budget" && !err.retryable && /more than 1 MiB \(the sub-resource budget\)/.test(err.message),
    );
  });

  it("counts compressed sub-resources by their decoded size", async () => {
    await assert.rejects(
      engine.render({ kind: "pdf", html: images(2, 700, "/gz.svg") }),
      (err: unknown) => err instanceof RenderFailure && err.reason === "resource_budget",
    );
  });

  it("renders again after a document over budget", async () => {
    const out = await engine.render({ kind: "pdf", html: "<p>next</p>" });
    assert.match(pdfText(out.data), /next/);
  });
});

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { RenderOptions } from "@pressroom/domain";
import { createLogger } from "@pressroom/platform/logger";
import type { RenderEngine } from "../engine";
import { startEngine } from "../test-support/engine";
import { PostProcessClient } from "./client";
import { PostProcessHost } from "./host";
import { postProcess, postProcessingOf } from "./index";
import { pngPixel } from "./png-stamp";

/** pdftotext -raw of a PDF, page by page (its non-empty pages). */
function pagesOf(pdf: Uint8Array, password?: string): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), "test-stamp-"));
  try {
    const file = path.join(dir, "doc.pdf");
    writeFileSync(file, pdf);
    const run = spawnSync("pdftotext", ["-raw", ...(password ? ["-upw", password] : []), file, "-"], { encoding: "utf8" });
    return run.stdout.split("\f").filter((page) => page.trim());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const options = (o: RenderOptions): RenderOptions => o;
/** Two minutes: a busy machine starts the pdf-lib threads slowly. */
const patient = () => ({ deadlineAt: performance.now() + 120_000, maxOutputBytes: 50 * 1024 * 1024 });

const HTML = `<!doctype html><html lang="en"><head><title>Invoice 42</title></head><body>
  <h1>Invoice 42</h1><p>Total due: 120.00 EUR.</p><p style="break-before: page">Terms</p></body></html>`;

/** Test mode's stamp (issue 46), drawn after the document was printed or captured. */
describe("test mode's stamp", () => {
  let engine: RenderEngine;
  let host: PostProcessHost;
  let printed: Uint8Array;
  before(async () => {
    engine = await startEngine({ slots: 1 });
    host = new PostProcessHost(createLogger("render-test", "warn"));
    printed = (await engine.render({ kind: "pdf", html: HTML })).data;
  });
  after(async () => {
    await engine.close();
    await host.close();
  });

  it("TEST on every page of a PDF, over the document's own watermark, and kept through encryption", async () => {
    const plain = pagesOf(await postProcess(printed, postProcessingOf(options({}), true), patient()));
    assert.equal(plain.length, 2);
    for (const page of plain) assert.match(page, /TEST/);
    assert.ok(!pagesOf(printed).some((page) => /TEST/.test(page)), "the document itself says no TEST");
    const asked = options({ watermark: { text: "DRAFT" }, encrypt: { userPassword: "u-1", ownerPassword: "o-1" } });
    const pages = pagesOf(await postProcess(printed, postProcessingOf(asked, true), patient()), "u-1");
    assert.equal(pages.length, 2);
    for (const page of pages) {
      assert.match(page, /TEST/);
      assert.match(page, /D\s*R\s*A\s*F\s*T/, "the document's own watermark (at its 45 degrees, a letter a line) is there too");
    }
  });

  it("a TEST band across the middle of a png, its edges untouched, drawn by the post-processing process", async () => {
    const shot = (await engine.render({ kind: "png", html: '<body style="margin:0;background:#fff">', options: { imageWidth: 300, imageHeight: 200 } })).data;
    assert.deepEqual((await pngPixel(shot, 150, 100)).rgb, [255, 255, 255]);
    const stamped = await new PostProcessClient(() => host.url()).stampPng(shot, patient());
    const centre = await pngPixel(stamped, 150, 100);
    assert.deepEqual([centre.width, centre.height], [300, 200]);
    const red = await pngPixel(stamped, 2, 100);
    assert.ok(red.rgb[0] > 180 && red.rgb[1] < 100 && red.rgb[2] < 100, `the band is red at the left edge: ${red.rgb.join(",")}`);
    assert.deepEqual((await pngPixel(stamped, 2, 2)).rgb, [255, 255, 255], "outside the band the page is as it was");
    let white = 0;
    for (let x = 0; x < 300; x++) if ((await pngPixel(stamped, x, 100)).rgb.join() === "255,255,255") white++;
    assert.ok(white > 10, "the letters are drawn in white across the band");
  });
});

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MAX_IMAGE_SIDE, type RenderOptions } from "@pressroom/domain";
import { RenderFailure, type RenderEngine } from "./index";
import { failsWith, pngSize, startEngine } from "../test-support/engine";

/** A page 2,000 CSS px tall with a 300 × 120 box 1,500 px down (below an 800 px viewport), and a red pixel block at its top-left corner. */
const TALL = `<style>body { margin: 0 } #box { position: absolute; left: 40px; top: 1500px; width: 300px; height: 120px; background: #246 }
  #mark { position: absolute; left: 0; top: 0; width: 10px; height: 10px; background: #f00 }</style>
  <div style="height: 2000px"></div><div id="box"></div><div id="mark"></div>`;

describe("render engine: what a screenshot captures (full_page, selector, clip)", () => {
  let engine: RenderEngine;
  before(async () => {
    engine = await startEngine({ slots: 1 });
  });
  after(() => engine.close());

  const shot = (options: RenderOptions, html = TALL) =>
    engine.render({ html, kind: "png", options: { imageWidth: 640, imageHeight: 800, ...options } }).then((out) => pngSize(out.data));

  it("captures the viewport by default, and the whole page with fullPage, times the device scale factor", async () => {
    assert.deepEqual(await shot({}), { width: 640, height: 800 });
    assert.deepEqual(await shot({ fullPage: true }), { width: 640, height: 2000 });
    assert.deepEqual(await shot({ fullPage: true, deviceScaleFactor: 2 }), { width: 1280, height: 4000 });
    assert.deepEqual(await shot({ fullPage: true }, "<p>short</p>"), { width: 640, height: 800 }, "a short page keeps the viewport's height");
  });

  it("captures the one element a selector matches, even below the viewport, and a clip", async () => {
    assert.deepEqual(await shot({ selector: "#box" }), { width: 300, height: 120 });
    assert.deepEqual(await shot({ selector: "#box", deviceScaleFactor: 3 }), { width: 900, height: 360 });
    assert.deepEqual(await shot({ clip: { x: 100, y: 1700, width: 250, height: 90 } }), { width: 250, height: 90 });
  });

  it("fails the document's own way for an element not found, hidden, or a selector that is not CSS", async () => {
    const failure = (err: unknown) => (failsWith("invalid_document")(err) ? (err as RenderFailure).message : "");
    await assert.rejects(shot({ selector: "#missing" }), (err) => /^options\.selector "#missing" matches no element in the page$/.test(failure(err)));
    await assert.rejects(shot({ selector: "#gone" }, `<div id="gone" style="display:none">x</div>`), (err) => /no size/.test(failure(err)));
    await assert.rejects(shot({ selector: "##" }), (err) => /^options\.selector "##" is not a valid CSS selector$/.test(failure(err)));
  });

  it("refuses a page taller than the image cap, and more than one region", async () => {
    const tall = `<div style="height: ${MAX_IMAGE_SIDE + 500}px"></div>`;
    await assert.rejects(
      shot({ fullPage: true }, tall),
      (err) => err instanceof RenderFailure && /full_page: the page is \d+ CSS pixels tall/.test(err.message),
    );
    await assert.rejects(shot({ fullPage: true, selector: "#box" }), failsWith("invalid_document"));
  });
});

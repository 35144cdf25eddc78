import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cssLengthToInches, layoutOf } from "./paper";
import { RenderFailure } from "./types";

describe("paper", () => {
  it("converts CSS lengths to inches", () => {
    assert.equal(cssLengthToInches("1in", "m"), 1);
    assert.equal(cssLengthToInches("96px", "m"), 1);
    assert.equal(cssLengthToInches("25.4mm", "m"), 1);
    assert.equal(cssLengthToInches("72pt", "m"), 1);
    assert.equal(cssLengthToInches("", "m"), 0);
    assert.equal(cssLengthToInches("12", "m"), 12 / 96);
    assert.throws(
      () => cssLengthToInches("1em", "marginTop"),
      (err: unknown) => err instanceof RenderFailure && err.reason === "invalid_document" && /marginTop/.test(err.message),
    );
  });

  it("derives print parameters and the viewport from page settings", () => {
    const layout = layoutOf({
      html: "",
      kind: "pdf",
      options: {
        format: "A4",
        landscape: true,
        margin: { top: "10mm", right: "10mm", bottom: "10mm", left: "10mm" },
        headerHtml: "",
        footerHtml: "<span class=pageNumber></span>",
      },
    });
    assert.equal(layout.print?.landscape, true);
    assert.equal(layout.print?.preferCSSPageSize, false);
    assert.equal(layout.print?.displayHeaderFooter, true);
    assert.equal(layout.print?.headerTemplate, "<span></span>", "an empty header must not become Chromium's default one");
    assert.ok(layout.viewport.width > layout.viewport.height, "landscape content area");
  });

  it("lets a document without a paper choose its own page size, on A4 with 1 cm margins otherwise", () => {
    const layout = layoutOf({ html: "", kind: "pdf" });
    assert.equal(layout.print?.preferCSSPageSize, true);
    assert.equal(layout.print?.displayHeaderFooter, false);
    assert.deepEqual(
      [layout.print?.paperWidth, layout.print?.paperHeight, layout.print?.marginTop, layout.print?.marginLeft],
      [8.2677, 11.6929, 1 / 2.54, 1 / 2.54],
    );
    const margins = layoutOf({ html: "", kind: "pdf", options: { margin: { top: "2cm" }, landscape: true } });
    assert.deepEqual([margins.print?.marginTop, margins.print?.marginBottom, margins.print?.landscape], [2 / 2.54, 1 / 2.54, true]);
    assert.equal(margins.print?.preferCSSPageSize, true, "still no paper: the CSS @page size wins");
    assert.equal(layoutOf({ html: "", kind: "pdf", options: { format: "A5" } }).print?.preferCSSPageSize, false);
  });

  it("refuses impossible jobs as invalid_document", () => {
    const invalid = (err: unknown) => err instanceof RenderFailure && err.reason === "invalid_document" && !err.retryable;
    assert.throws(() => layoutOf({ html: "", kind: "png" }), invalid);
    assert.throws(() => layoutOf({ html: "", kind: "png", options: { imageWidth: 0, imageHeight: 10 } }), invalid);
    assert.throws(() => layoutOf({ html: "", kind: "png", options: { imageWidth: 10, imageHeight: 10, deviceScaleFactor: 4 as 2 } }), invalid);
    assert.throws(() => layoutOf({ html: "", kind: "png", options: { imageWidth: 10, imageHeight: 10, imageFormat: "jpeg", omitBackground: true } }), invalid);
    assert.throws(() => layoutOf({ html: "", kind: "pdf", options: { scale: 3 } }), invalid);
    assert.throws(() => layoutOf({ html: "", kind: "pdf", options: { pageRanges: "1-a" } }), invalid);
    assert.throws(
      () =>
        layoutOf({
          html: "",
          kind: "pdf",
          options: { format: "B7" },
        }),
      invalid,
    );
    assert.throws(
      () =>
        layoutOf({
          html: "",
          kind: "pdf",
          options: { format: "A6", margin: { top: "3in", bottom: "3in" } },
        }),
      invalid,
    );
  });

  const margin = { top: "0", right: "0", bottom: "0", left: "0" };

  it("takes a paper of width and height in CSS lengths, and refuses one out of range", () => {
    const layout = layoutOf({ html: "", kind: "pdf", options: { margin, width: "100mm", height: "4in" } });
    assert.ok(Math.abs(layout.print!.paperWidth - 100 / 25.4) < 1e-9);
    assert.equal(layout.print!.paperHeight, 4);
    assert.equal(layout.viewport.width, Math.round((100 / 25.4) * 96));
    assert.throws(() => layoutOf({ html: "", kind: "pdf", options: { margin, width: "1mm", height: "4in" } }), /paper width must be from 1 to 200 inches/);
  });

  it("adds the print settings, the media and the readiness condition", () => {
    const layout = layoutOf({
      html: "",
      kind: "pdf",
      options: {
        margin,
        format: "A4",
        scale: 0.5,
        printBackground: false,
        pageRanges: "1-2,4",
        preferCssPageSize: true,
        media: "screen",
        waitFor: { selector: "#ready" },
      },
    });
    assert.equal(layout.print?.scale, 0.5);
    assert.equal(layout.print?.printBackground, false);
    assert.equal(layout.print?.pageRanges, "1-2,4");
    assert.equal(layout.print?.preferCSSPageSize, true);
    assert.equal(layout.media, "screen");
    assert.deepEqual(layout.waitFor, { selector: "#ready" });
    const raw = layoutOf({ html: "", kind: "pdf", options: { printBackground: false } });
    assert.equal(raw.print?.preferCSSPageSize, true);
    assert.equal(raw.print?.printBackground, false);
  });

  it("captures an image in its format, with quality where it has one", () => {
    assert.equal(layoutOf({ html: "", kind: "png", options: { imageWidth: 10, imageHeight: 10 } }).capture, undefined);
    assert.deepEqual(layoutOf({ html: "", kind: "png", options: { imageWidth: 10, imageHeight: 10, imageFormat: "jpeg" } }).capture, {
      format: "jpeg",
      quality: 90,
      omitBackground: false,
    });
    assert.deepEqual(layoutOf({ html: "", kind: "png", options: { imageWidth: 10, imageHeight: 10, omitBackground: true } }).capture, {
      format: "png",
      quality: undefined,
      omitBackground: true,
    });
  });
});

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import type { PageSettings } from "../engine";
import { imageOf, pageOf, printOf, waitConditionOf } from "./job-options";

const template: PageSettings = {
  format: "Letter",
  landscape: false,
  marginTop: "20mm",
  marginRight: "15mm",
  marginBottom: "20mm",
  marginLeft: "15mm",
  headerTemplate: "",
  footerTemplate: "<span class=pageNumber></span>",
};
const options = (partial: Partial<jobEventsV1.RenderOptions>) => jobEventsV1.RenderOptions.fromPartial(partial);

describe("a job's options", () => {
  it("override the template's page settings, one by one", () => {
    assert.equal(pageOf(template, undefined, {}), template);
    assert.equal(pageOf(template, options({ scale: 2 }), {}), template);
    const page = pageOf(template, options({ format: "A5", landscape: true, margin: { top: "1in" } }), { footer: "<p>f</p>" })!;
    assert.equal(page.format, "A5");
    assert.equal(page.landscape, true);
    assert.equal(page.marginTop, "1in");
    assert.equal(page.marginLeft, "15mm");
    assert.equal(page.footerTemplate, "<p>f</p>");
    const sized = pageOf(template, options({ width: "100mm", height: "200mm" }), {})!;
    assert.deepEqual([sized.format, sized.width, sized.height], ["", "100mm", "200mm"]);
  });

  it("give raw HTML and a url an A4 page with 1 cm margins once they touch the page", () => {
    assert.equal(pageOf(undefined, options({ scale: 1 }), {}), undefined);
    const page = pageOf(undefined, options({ headerHtml: "h" }), { header: "<b>h</b>" })!;
    assert.deepEqual([page.format, page.marginTop, page.headerTemplate], ["A4", "1cm", "<b>h</b>"]);
  });

  it("let raw HTML keep its CSS page size unless the request sizes the paper", () => {
    assert.equal(printOf(undefined, false), undefined);
    assert.deepEqual(printOf(options({ media: "screen" }), false), { preferCssPageSize: true, media: "screen" });
    assert.deepEqual(printOf(options({ format: "A4" }), false), undefined);
    assert.deepEqual(printOf(options({ scale: 0.5, printBackground: false, pageRanges: "1-2" }), true), {
      scale: 0.5,
      printBackground: false,
      pageRanges: "1-2",
    });
  });

  it("name one readiness condition", () => {
    assert.deepEqual(waitConditionOf(options({ waitFor: { selector: "#a" } })), { selector: "#a" });
    assert.deepEqual(waitConditionOf(options({ waitFor: { networkIdle: true } })), { networkIdle: true });
    assert.deepEqual(waitConditionOf(options({ waitFor: { delayMs: 0 } })), { delayMs: 0 });
    assert.equal(waitConditionOf(options({})), undefined);
  });

  it("make an image of the template's size or the url's viewport, in the asked format", () => {
    assert.deepEqual(imageOf({ width: 100, height: 50, deviceScaleFactor: 2 }, options({ imageFormat: "webp", quality: 70 })), {
      width: 100,
      height: 50,
      deviceScaleFactor: 2,
      format: "webp",
      quality: 70,
    });
    assert.deepEqual(imageOf(undefined, options({ imageWidth: 640, omitBackground: true })), {
      width: 640,
      height: 800,
      deviceScaleFactor: 1,
      format: "png",
      omitBackground: true,
    });
  });
});

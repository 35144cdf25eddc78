import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { previewPixels } from "./paper";

describe("a template preview's size", () => {
  it("is a png template's own size, or a pdf template's paper at 96 px to the inch, landscape turned", () => {
    assert.deepEqual(previewPixels({ width: 1200, height: 630 }), { width: 1200, height: 630 });
    assert.deepEqual(previewPixels({ page: { format: "A4", landscape: false } }), { width: 794, height: 1123 });
    assert.deepEqual(previewPixels({ page: { format: "letter", landscape: true } }), { width: 1056, height: 816 });
    assert.deepEqual(previewPixels({ page: { format: "Tabloid", landscape: false } }), { width: 1056, height: 1632 });
  });

  it("is A4's without a page or for a paper it does not know", () => {
    assert.deepEqual(previewPixels({}), { width: 794, height: 1123 });
    assert.deepEqual(previewPixels({ page: { format: "B6", landscape: false } }), { width: 794, height: 1123 });
  });
});

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { countPdfPages } from "./pdf";

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

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ArchiveNames } from "./names";

describe("the names of a batch's zip entries", () => {
  it("are each item's filename, or its index with its output's extension, made unique with a suffix", () => {
    const names = new ArchiveNames();
    const named = [
      names.next({ index: 0, filename: "invoice.pdf" }, "application/pdf"),
      names.next({ index: 1, filename: "" }, "application/pdf"),
      names.next({ index: 2, filename: "Invoice.PDF" }, "application/pdf"),
      names.next({ index: 3, filename: "invoice.pdf" }, "application/pdf"),
      names.next({ index: 4, filename: "" }, "image/jpeg"),
      names.next({ index: 5, filename: "1.pdf" }, "application/pdf"),
      names.next({ index: 6, filename: "README" }, "application/pdf"),
      names.next({ index: 7, filename: "readme" }, "application/pdf"),
    ];
    assert.deepEqual(named, ["invoice.pdf", "1.pdf", "Invoice (2).PDF", "invoice (3).pdf", "4.jpg", "1 (2).pdf", "README", "readme (2)"]);
  });
});

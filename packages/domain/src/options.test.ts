import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { camelKeys, downloadName, optionsOfContract, optionsToContract, pdfaPart, safeFilename, type RenderOptions } from "./options";

describe("render options: one shape", () => {
  it("names the public snake_case options by the definition's names, at every depth", () => {
    assert.deepEqual(
      camelKeys({ print_background: false, wait_for: { network_idle: true }, watermark: { text: "x", font_size: 9 }, metadata: { keywords: ["a_b"] } }),
      {
        printBackground: false,
        waitFor: { networkIdle: true },
        watermark: { text: "x", fontSize: 9 },
        metadata: { keywords: ["a_b"] },
      },
    );
  });

  it("crosses the job contract and comes back the same", () => {
    const options: RenderOptions = {
      format: "A4",
      margin: { top: "1cm" },
      pageRanges: "1-2",
      media: "screen",
      waitFor: { selector: "#ready" },
      metadata: { title: "t", keywords: ["k"] },
      pdfa: "PDF/A-2b",
      watermark: { text: "DRAFT", opacity: 0.5 },
      encrypt: { ownerPassword: "o", permissions: { print: true, copy: false, modify: false, annotate: false } },
      imageFormat: "webp",
    };
    const decoded = jobEventsV1.RenderOptions.decode(jobEventsV1.RenderOptions.encode(optionsToContract(options)).finish());
    // What was left out comes back undefined, which JSON leaves out too.
    assert.deepEqual(JSON.parse(JSON.stringify(optionsOfContract(decoded))), options);
    assert.deepEqual(optionsOfContract(undefined), {});
  });

  it("refuses a value outside an option's set rather than printing something else", () => {
    for (const odd of [{ media: "tv" }, { pdfa: "PDF/A-4" }, { imageFormat: "gif" }]) {
      assert.throws(() => optionsOfContract(jobEventsV1.RenderOptions.fromPartial(odd)), /unknown/, JSON.stringify(odd));
    }
  });

  it("knows each PDF/A level's part", () => {
    assert.deepEqual([pdfaPart("PDF/A-1b"), pdfaPart("PDF/A-2b"), pdfaPart("PDF/A-3b")], [1, 2, 3]);
  });
});

describe("download names", () => {
  it("make a requested name safe for a header and any file system", () => {
    assert.equal(safeFilename(' ..a/b\\c:d*e?f"g<h>i|j\u0007.pdf. '), "a_b_c_d_e_f_g_h_i_j_.pdf");
    assert.equal(safeFilename("..."), "");
    assert.equal(safeFilename("x".repeat(300)).length, 200);
  });

  it("name the download after the request's filename, with the output's extension", () => {
    assert.equal(downloadName(undefined, "invoice-job_1", "pdf"), "invoice-job_1.pdf");
    assert.equal(downloadName("Rechnung März", "x", "pdf"), "Rechnung März.pdf");
    assert.equal(downloadName("card.PNG", "x", "png"), "card.PNG");
    assert.equal(downloadName("photo.jpg", "x", "jpeg"), "photo.jpg");
    assert.equal(downloadName("photo.JPEG", "x", "jpeg"), "photo.JPEG");
    assert.equal(downloadName("photo.jpg", "x", "webp"), "photo.jpg.webp");
  });

  it("keep the download name within 200 characters, its extension included", () => {
    assert.equal(downloadName("a".repeat(200), "x", "pdf"), `${"a".repeat(196)}.pdf`);
    assert.equal(downloadName("b".repeat(200), "x", "jpeg"), `${"b".repeat(195)}.jpeg`);
    assert.equal(downloadName(`${"c".repeat(195)}.pdf`, "x", "pdf").length, 199);
    // Not a half of a surrogate pair, nor a trailing dot or space, before the extension.
    assert.equal(downloadName(`${"d".repeat(195)}🎉xyz`, "x", "pdf"), `${"d".repeat(195)}.pdf`);
    assert.equal(downloadName(`${"e".repeat(194)}. ${"f".repeat(10)}`, "x", "pdf"), `${"e".repeat(194)}.pdf`);
  });
});

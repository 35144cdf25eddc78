import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { RenderEngine } from "./index";
import { pdfFonts, pdfText, startEngine } from "../test-support/engine";

const sha = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

/**
 * The installed font set: documents naming Arial, Times New Roman or Courier
 * New get metric-compatible faces, and CJK and emoji text is drawn with real
 * glyphs, embedded in the PDF.
 */
describe("render engine: fonts", () => {
  let engine: RenderEngine;
  before(async () => {
    engine = await startEngine({ slots: 1 });
  });
  after(() => engine.close());

  it("embeds every font, with metric-compatible faces for Arial, Times New Roman and Courier New", async () => {
    const out = await engine.render({
      kind: "pdf",
      html: `<p style="font-family: Arial">Invoice total</p><p style="font-family: 'Times New Roman'">Terms and conditions</p>
        <p style="font-family: 'Courier New'">REF-0042</p><p>請求書の合計 中文发票 한국어 청구서</p><p>Paid 🎉 📄 ✅</p>`,
    });
    const fonts = pdfFonts(out.data);
    assert.ok(fonts.length >= 4, JSON.stringify(fonts));
    for (const font of fonts) assert.ok(font.embedded, `not embedded: ${JSON.stringify(font)}`);
    for (const face of ["LiberationSans", "LiberationSerif", "LiberationMono"]) {
      assert.ok(
        fonts.some((f) => f.name.endsWith(`+${face}`)),
        `${face} is used and embedded: ${fonts.map((f) => f.name).join(", ")}`,
      );
    }
    // CJK and colour emoji are drawn as (Type 3) glyph programs with a Unicode map.
    assert.ok(
      fonts.some((f) => f.type === "Type 3" && f.unicode),
      "CJK and emoji glyphs are embedded",
    );
    const text = pdfText(out.data);
    assert.match(text, /請求書の合計 中文发票 한국어 청구서/);
    assert.match(text, /🎉\s*📄\s*✅/u);
  });

  it("draws CJK and emoji as glyphs, not boxes: different characters give different pixels", async () => {
    const png = (text: string) =>
      engine.render({
        kind: "png",
        html: `<body style="margin:0"><p style="font-size:40px;margin:8px">${text}</p></body>`,
        options: { imageWidth: 240, imageHeight: 80 },
      });
    // A missing glyph is drawn as the same box whatever the character, so two
    // different strings of missing glyphs would come out as identical images.
    const [japanese, chinese, korean, emojiA, emojiB, unassigned] = await Promise.all(
      ["請求書", "发票单", "청구서", "🎉📄", "✅🚀", "\u0378\u0379\u0380"].map(async (t) => sha((await png(t)).data)),
    );
    assert.equal(new Set([japanese, chinese, korean, emojiA, emojiB, unassigned]).size, 6);
  });
});

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { RenderEngine } from "./index";
import { pdfText } from "./test-helpers";

const EXECUTABLE = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

function pdfFonts(data: Uint8Array): { name: string; type: string; embedded: boolean; unicode: boolean }[] {
  const dir = mkdtempSync(path.join(tmpdir(), "fonts-test-"));
  try {
    const file = path.join(dir, "out.pdf");
    writeFileSync(file, data);
    return execFileSync("pdffonts", [file], { encoding: "utf8" })
      .split("\n")
      .slice(2)
      .filter(Boolean)
      .map((line) => {
        // name, type (one or more words), encoding, emb, sub, uni, object, generation
        const cols = line.trim().split(/\s+/);
        return { name: cols[0]!, type: cols.slice(1, -6).join(" "), embedded: cols.at(-5) === "yes", unicode: cols.at(-3) === "yes" };
      });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sha = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

/**
 * The installed font set: documents naming Arial, Times New Roman or Courier
 * New get metric-compatible faces, and CJK and emoji text is drawn with real
 * glyphs, embedded in the PDF.
 */
describe("render engine: fonts", () => {
  let engine: RenderEngine;
  before(async () => {
    engine = await RenderEngine.start({ executablePath: EXECUTABLE, slots: 1 });
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
      assert.ok(fonts.some((f) => f.name.endsWith(`+${face}`)), `${face} is used and embedded: ${fonts.map((f) => f.name).join(", ")}`);
    }
    // CJK and colour emoji are drawn as (Type 3) glyph programs with a Unicode map.
    assert.ok(fonts.some((f) => f.type === "Type 3" && f.unicode), "CJK and emoji glyphs are embedded");
    const text = pdfText(out.data);
    assert.match(text, /請求書の合計 中文发票 한국어 청구서/);
    assert.match(text, /🎉\s*📄\s*✅/u);
  });

  it("draws CJK and emoji as glyphs, not boxes: different characters give different pixels", async () => {
    const png = (text: string) =>
      engine.render({ kind: "png", html: `<body style="margin:0"><p style="font-size:40px;margin:8px">${text}</p></body>`, image: { width: 240, height: 80 } });
    // A missing glyph is drawn as the same box whatever the character, so two
    // different strings of missing glyphs would come out as identical images.
    const [japanese, chinese, korean, emojiA, emojiB, unassigned] = await Promise.all(
      ["請求書", "发票单", "청구서", "🎉📄", "✅🚀", "\u0378\u0379\u0380"].map(async (t) => sha((await png(t)).data)),
    );
    assert.equal(new Set([japanese, chinese, korean, emojiA, emojiB, unassigned]).size, 6);
  });
});

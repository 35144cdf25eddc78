import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

function withTempFile<T>(bytes: Uint8Array, fn: (file: string) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-pdf-"));
  const file = path.join(dir, "out.pdf");
  writeFileSync(file, bytes);
  try {
    return fn(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The text of a PDF, via poppler's pdftotext. */
export function pdfText(bytes: Uint8Array): string {
  return withTempFile(bytes, (file) => execFileSync("pdftotext", ["-layout", file, "-"], { encoding: "utf8" }));
}

/** pdfinfo's fields (Pages, Page size, ...). */
export function pdfInfo(bytes: Uint8Array): Record<string, string> {
  const text = withTempFile(bytes, (file) => execFileSync("pdfinfo", [file], { encoding: "utf8" }));
  return Object.fromEntries(
    text
      .split("\n")
      .filter((line) => line.includes(":"))
      .map((line) => [line.slice(0, line.indexOf(":")).trim(), line.slice(line.indexOf(":") + 1).trim()]),
  );
}

/** The PDF's XMP metadata packet, via pdfinfo -meta ("" without one). */
export function pdfXmp(bytes: Uint8Array): string {
  return withTempFile(bytes, (file) => execFileSync("pdfinfo", ["-meta", file], { encoding: "utf8" }));
}

/** Width and height of a PNG, from its IHDR chunk. */
export function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.subarray(1, 4).toString("latin1") !== "PNG") throw new Error("not a PNG");
  return { width: buffer.readUInt32BE(16), height: buffer.readUInt32BE(20) };
}

/**
 * Asserts that a pdf template's preview, its first printed page drawn at 96 pixels to the inch, has its paper's size in CSS
 * pixels, to a pixel: the page Chromium prints is not a whole number of pixels (its A4 is 794.56 × 1122.56).
 */
export function assertPageSize(actual: { width: number; height: number }, paper: { width: number; height: number }, message: string): void {
  const near = Math.abs(actual.width - paper.width) <= 1 && Math.abs(actual.height - paper.height) <= 1;
  assert.ok(near, `${message}: ${actual.width}×${actual.height}, not the paper's ${paper.width}×${paper.height}`);
}

/** The fonts of a PDF as poppler's pdffonts lists them: name and whether each is embedded. */
export function pdfFonts(bytes: Uint8Array): { name: string; embedded: boolean }[] {
  const text = withTempFile(bytes, (file) => execFileSync("pdffonts", [file], { encoding: "utf8" }));
  return text
    .split("\n")
    .slice(2)
    .filter((line) => line.trim())
    .map((line) => {
      const columns = line.trim().split(/\s+/);
      // name type(s) encoding emb sub uni object ID: "emb" is the fifth column from the end.
      return { name: columns[0]!, embedded: columns[columns.length - 5] === "yes" };
    });
}

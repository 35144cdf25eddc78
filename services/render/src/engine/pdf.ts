const PAGE_TOKEN = Buffer.from("/Type");

/**
 * Counts the page objects of a PDF without parsing it: every `/Type /Page`
 * dictionary entry, not `/Pages` (the page tree). Chromium's Skia backend
 * writes uncompressed object dictionaries, so this is exact for its output.
 */
export function countPdfPages(pdf: Uint8Array): number {
  const buf = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  let count = 0;
  for (let at = buf.indexOf(PAGE_TOKEN); at !== -1; at = buf.indexOf(PAGE_TOKEN, at + PAGE_TOKEN.length)) {
    let i = at + PAGE_TOKEN.length;
    while (i < buf.length && isPdfWhitespace(buf[i]!)) i++;
    if (buf[i] !== 0x2f /* / */) continue;
    if (buf.toString("latin1", i + 1, i + 5) !== "Page") continue;
    const next = buf[i + 5];
    if (next === undefined || !isNameChar(next)) count++;
  }
  return count;
}

function isPdfWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
}

/** Regular characters that would continue a PDF name (so `/Pages` is not `/Page`). */
function isNameChar(c: number): boolean {
  return !(isPdfWhitespace(c) || c === 0x2f || c === 0x3c || c === 0x3e || c === 0x5b || c === 0x5d || c === 0x28 || c === 0x29 || c === 0x25);
}

import { promisify } from "node:util";
import { deflate, inflate } from "node:zlib";

const inflateAsync = promisify(inflate);
const deflateAsync = promisify(deflate);

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** The most raw pixel bytes a stamp decodes (a 10,000 × 10,000 RGBA image is 400 MB; Chromium's captures stay far below). */
const MAX_RAW_BYTES = 512 * 1024 * 1024;

/** The glyphs of "TEST", 5 × 7 cells each, drawn as blocks. */
const GLYPHS: Record<string, string[]> = {
  T: ["#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."],
  E: ["#####", "#....", "#....", "####.", "#....", "#....", "#####"],
  S: [".####", "#....", "#....", ".###.", "....#", "....#", "####."],
};
const WORD = "TEST";

/** The band's colour (red) and how much of the page shows through it; the letters are white. */
const BAND = { r: 200, g: 30, b: 30, alpha: 0.75 };

interface Png {
  width: number;
  height: number;
  /** Bytes per pixel: 3 (RGB) or 4 (RGBA), 8 bits a sample. */
  bpp: 3 | 4;
  /** The chunks before IDAT (IHDR first) and after the last IDAT, kept as they are. */
  head: Buffer[];
  tail: Buffer[];
  idat: Buffer;
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "latin1");
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Reads the chunks of a PNG of 8-bit RGB or RGBA, not interlaced (what Chromium's captureScreenshot writes). */
function parse(png: Uint8Array): Png {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (!buf.subarray(0, 8).equals(SIGNATURE)) throw new Error("test stamp: not a PNG");
  const head: Buffer[] = [];
  const tail: Buffer[] = [];
  const idat: Buffer[] = [];
  for (let at = 8; at < buf.length;) {
    const length = buf.readUInt32BE(at);
    const type = buf.toString("latin1", at + 4, at + 8);
    const whole = buf.subarray(at, at + 12 + length);
    if (type === "IDAT") idat.push(buf.subarray(at + 8, at + 8 + length));
    else (idat.length === 0 ? head : tail).push(whole);
    at += 12 + length;
  }
  const ihdr = head[0]!;
  const [depth, colour, interlace] = [ihdr[16], ihdr[17], ihdr[20]];
  if (ihdr.toString("latin1", 4, 8) !== "IHDR" || depth !== 8 || (colour !== 2 && colour !== 6) || interlace !== 0) {
    throw new Error(`test stamp: unsupported PNG (bit depth ${depth}, colour type ${colour}, interlace ${interlace})`);
  }
  return { width: ihdr.readUInt32BE(8), height: ihdr.readUInt32BE(12), bpp: colour === 6 ? 4 : 3, head, tail, idat: Buffer.concat(idat) };
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Undoes each scanline's filter in place, leaving every row's filter byte 0 (None). */
function unfilter(raw: Buffer, png: Png): void {
  const stride = png.width * png.bpp;
  for (let y = 0; y < png.height; y++) {
    const row = y * (stride + 1);
    const filter = raw[row]!;
    raw[row] = 0;
    const prev = row - stride - 1;
    for (let x = 0; x < stride; x++) {
      const i = row + 1 + x;
      const a = x >= png.bpp ? raw[i - png.bpp]! : 0;
      const b = y > 0 ? raw[prev + 1 + x]! : 0;
      const c = y > 0 && x >= png.bpp ? raw[prev + 1 + x - png.bpp]! : 0;
      const add = filter === 0 ? 0 : filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : filter === 4 ? paeth(a, b, c) : -1;
      if (add < 0) throw new Error(`test stamp: unknown PNG filter ${filter}`);
      raw[i] = (raw[i]! + add) & 0xff;
    }
  }
}

/** Paints the TEST band across the middle of the image: a red band with the word in white, opaque enough to read on any page. */
function paint(raw: Buffer, png: Png): void {
  const cols = WORD.length * 6 - 1;
  const cell = Math.max(1, Math.floor(Math.min(png.width / (cols + 4), png.height / 4 / 9)));
  const bandHeight = Math.min(png.height, cell * 11);
  const top = Math.floor((png.height - bandHeight) / 2);
  const left = Math.floor((png.width - cols * cell) / 2);
  const textTop = top + 2 * cell;
  const stride = png.width * png.bpp;
  const lit = (x: number, y: number): boolean => {
    const col = Math.floor((x - left) / cell);
    const line = Math.floor((y - textTop) / cell);
    if (x < left || col >= cols || y < textTop || line >= 7) return false;
    const glyph = GLYPHS[WORD[Math.floor(col / 6)]!]!;
    return col % 6 < 5 && glyph[line]![col % 6] === "#";
  };
  for (let y = top; y < top + bandHeight; y++) {
    for (let x = 0; x < png.width; x++) {
      const i = y * (stride + 1) + 1 + x * png.bpp;
      if (lit(x, y)) {
        raw[i] = raw[i + 1] = raw[i + 2] = 255;
      } else {
        raw[i] = Math.round(raw[i]! * (1 - BAND.alpha) + BAND.r * BAND.alpha);
        raw[i + 1] = Math.round(raw[i + 1]! * (1 - BAND.alpha) + BAND.g * BAND.alpha);
        raw[i + 2] = Math.round(raw[i + 2]! * (1 - BAND.alpha) + BAND.b * BAND.alpha);
      }
      if (png.bpp === 4) raw[i + 3] = 255;
    }
  }
}

/**
 * A test-mode image's stamp (issue 46): the PNG as Chromium captured it, with a band reading TEST
 * painted across its middle on its decoded pixels, after the page's own content, so nothing the
 * document does (its CSS, its scripts) can hide it. 8-bit RGB or RGBA, not interlaced; anything
 * else is refused rather than handed over unstamped.
 */
export async function stampPng(png: Uint8Array): Promise<Uint8Array> {
  const parsed = parse(png);
  const rawBytes = (parsed.width * parsed.bpp + 1) * parsed.height;
  if (rawBytes > MAX_RAW_BYTES) throw new Error(`test stamp: ${parsed.width} × ${parsed.height} is too large to stamp`);
  const raw = await inflateAsync(parsed.idat, { maxOutputLength: rawBytes });
  if (raw.length !== rawBytes) throw new Error("test stamp: the PNG's pixel data does not match its size");
  unfilter(raw, parsed);
  paint(raw, parsed);
  const idat = await deflateAsync(raw, { level: 6 });
  return Buffer.concat([SIGNATURE, ...parsed.head, chunk("IDAT", idat), ...parsed.tail]);
}

/** The RGB(A) pixel at (x, y) of a PNG this module can read: for tests that look at a stamp. */
export async function pngPixel(png: Uint8Array, x: number, y: number): Promise<{ width: number; height: number; rgb: [number, number, number] }> {
  const parsed = parse(png);
  const raw = await inflateAsync(parsed.idat);
  unfilter(raw, parsed);
  const i = y * (parsed.width * parsed.bpp + 1) + 1 + x * parsed.bpp;
  return { width: parsed.width, height: parsed.height, rgb: [raw[i]!, raw[i + 1]!, raw[i + 2]!] };
}

import { randomBytes } from "node:crypto";
import type { Transform } from "node:stream";
import * as zlib from "node:zlib";

/**
 * Every job's document lives at its own origin under this (reserved, never
 * resolvable) name, so whatever one job stores under its origin is out of reach
 * of every later job by the same-origin policy, before any wipe.
 */
export const SYNTHETIC_SITE = "pressroom.invalid";
const SYNTHETIC_SUFFIX = `.document.${SYNTHETIC_SITE}`;

export function newDocumentOrigin(): string {
  return `https://${randomBytes(12).toString("hex")}${SYNTHETIC_SUFFIX}`;
}

export type RequestDecision =
  /** One of the job's assets (`assets/<name>` relative to the document): answer with its bytes. */
  | { kind: "asset"; name: string }
  /** Anything else under the document's own origin (favicon, relative links): 404. */
  | { kind: "not_found" }
  /** An http(s) sub-resource: ask the SubresourceFetcher. */
  | { kind: "fetch"; url: URL }
  /** data: and blob: never leave the renderer. */
  | { kind: "continue" }
  /** Refused. `navigation`: the top-level document tried to go somewhere (the job's document is written into its page, never loaded). */
  | { kind: "block"; navigation: boolean };

export interface RequestFacts {
  url: string;
  resourceType: string;
  isMainFrame: boolean;
}

export interface JobFacts {
  documentUrl: string;
  /** The names of the job's assets. */
  assets?: ReadonlyMap<string, unknown>;
}

const ASSET_PATH = /^\/assets\/([^/]+)$/;

/** The asset a path of the document's origin names (`/assets/<name>`, percent-decoded), if any. */
function assetName(path: string): string | undefined {
  const raw = ASSET_PATH.exec(path)?.[1];
  if (raw === undefined) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** The network policy, as a pure function of one intercepted request. */
export function decideRequest(req: RequestFacts, job: JobFacts | undefined): RequestDecision {
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return { kind: "block", navigation: false };
  }
  if (req.isMainFrame && req.resourceType === "Document") return { kind: "block", navigation: true };
  if (url.protocol === "data:" || url.protocol === "blob:") return { kind: "continue" };
  if (url.protocol !== "http:" && url.protocol !== "https:") return { kind: "block", navigation: false };
  if (!job) return { kind: "block", navigation: false };
  const host = url.hostname.toLowerCase();
  if (url.protocol === "https:" && host === new URL(job.documentUrl).hostname && url.port === "") {
    const name = assetName(url.pathname);
    return name !== undefined && job.assets?.has(name) ? { kind: "asset", name } : { kind: "not_found" };
  }
  // Other jobs' origins, and the synthetic site itself, are never reachable.
  if (host === SYNTHETIC_SITE || host.endsWith(`.${SYNTHETIC_SITE}`)) return { kind: "block", navigation: false };
  return { kind: "fetch", url };
}

/** The media types of the assets a template may carry, by file extension; anything else is application/octet-stream. */
const ASSET_TYPES: Record<string, string> = {
  css: "text/css; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  json: "application/json",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  woff: "font/woff",
  woff2: "font/woff2",
  ttf: "font/ttf",
  otf: "font/otf",
};

export function assetContentType(name: string): string {
  return ASSET_TYPES[name.slice(name.lastIndexOf(".") + 1).toLowerCase()] ?? "application/octet-stream";
}

/**
 * Response headers that would leave state behind in the browser context beyond
 * the job (HSTS, Alt-Svc, reporting endpoints, client-hint and compression
 * dictionary opt-ins) or that describe an encoding the body no longer has.
 */
const DROPPED_RESPONSE_HEADERS = new Set([
  "accept-ch",
  "alt-svc",
  "clear-site-data",
  "connection",
  "content-encoding",
  "content-length",
  "critical-ch",
  "etag",
  "expires",
  "keep-alive",
  "last-modified",
  "nel",
  "proxy-authenticate",
  "public-key-pins",
  "public-key-pins-report-only",
  "report-to",
  "reporting-endpoints",
  "service-worker-allowed",
  "strict-transport-security",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "use-as-dictionary",
  "cache-control",
  "pragma",
]);

export interface HeaderEntry {
  name: string;
  value: string;
}

/** Fetcher headers → CDP header entries, minus stateful headers, never cacheable. */
export function responseHeaders(headers: Record<string, string>): HeaderEntry[] {
  const out: HeaderEntry[] = [];
  for (const [rawName, rawValue] of Object.entries(headers)) {
    const name = rawName.toLowerCase();
    if (DROPPED_RESPONSE_HEADERS.has(name) || typeof rawValue !== "string") continue;
    // Several Set-Cookie headers may arrive joined by newlines.
    const values = name === "set-cookie" ? rawValue.split("\n") : [rawValue.replace(/[\r\n]+/g, " ")];
    for (const value of values) if (value.trim()) out.push({ name, value: value.trim() });
  }
  out.push({ name: "cache-control", value: "no-store" });
  return out;
}

/** Fetcher statuses outside HTTP's range would make Chromium reject the whole response. */
export function responseStatus(status: number): number {
  return Number.isInteger(status) && status >= 200 && status <= 599 ? status : 502;
}

/** Encodings the engine can undo (Node 20's zlib has no zstd). */
const ACCEPTED_ENCODINGS = "gzip, deflate, br";
/** The most a decompressed sub-resource may grow to (a decompression bomb stops here). */
export const MAX_DECODED_BYTES = 64 * 1024 * 1024;

/** Chromium's request headers as the fetcher should send them: only encodings the engine can decode. */
export function fetcherRequestHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() !== "accept-encoding") out[name] = value;
  out["Accept-Encoding"] = ACCEPTED_ENCODINGS;
  return out;
}

/**
 * What a fetcher's `budget.take` throws once the job's sub-resource budget is
 * spent.
 */
export class SubresourceTooLarge extends Error {
  override readonly name = "SubresourceTooLarge";
}

/** At most this many stacked codings (`Content-Encoding: gzip, br`) are undone. */
const MAX_CODINGS = 3;

/**
 * Chromium does not decode a body handed to it by the interception, so a body
 * the fetcher returns still encoded (Content-Encoding, one coding or several
 * stacked) is decoded here, each coding by a zlib stream, last applied first.
 * Every decoded chunk of every layer is handed to `count` before it is kept:
 * `count` throws to stop (the job's budget is spent), which destroys the
 * decoder at once, so a decompression bomb inflates no further than the
 * limit; past MAX_DECODED_BYTES a layer fails too.
 */
export async function decodeBody(headers: Record<string, string>, body: Buffer, count: (decodedBytes: number) => void): Promise<Buffer> {
  const header = Object.entries(headers).find(([name]) => name.toLowerCase() === "content-encoding")?.[1] ?? "";
  const codings = header
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding && coding !== "identity");
  if (codings.length > MAX_CODINGS) throw new Error(`more than ${MAX_CODINGS} stacked content-encodings`);
  const unsupported = codings.find((coding) => !Object.hasOwn(DECODERS, coding));
  if (unsupported !== undefined) throw new Error(`unsupported content-encoding ${unsupported}`);
  let layer = body;
  for (const coding of codings.reverse()) {
    if (layer.byteLength === 0) break;
    layer = await decodeLayer(DECODERS[coding]!(layer), layer, count);
  }
  return layer;
}

/** A decoder for each coding the engine undoes, given the bytes it will decode. */
const DECODERS: Record<string, (input: Buffer) => Transform> = {
  gzip: () => zlib.createGunzip(),
  "x-gzip": () => zlib.createGunzip(),
  // Servers send both zlib-wrapped (RFC 1950) and raw deflate under this name.
  deflate: (input) => (isZlibWrapped(input) ? zlib.createInflate() : zlib.createInflateRaw()),
  br: () => zlib.createBrotliDecompress(),
};

/** RFC 1950's header: compression method 8 in the first byte's low nibble, and the first two bytes a multiple of 31. */
function isZlibWrapped(input: Buffer): boolean {
  return input.byteLength >= 2 && (input[0]! & 0x0f) === 8 && ((input[0]! << 8) | input[1]!) % 31 === 0;
}

async function decodeLayer(decoder: Transform, input: Buffer, count: (decodedBytes: number) => void): Promise<Buffer> {
  decoder.end(input);
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop by a throw destroys the decoder: nothing more is inflated.
  for await (const chunk of decoder as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > MAX_DECODED_BYTES) throw new Error(`a sub-resource decodes to more than ${MAX_DECODED_BYTES} bytes`);
    count(chunk.byteLength);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

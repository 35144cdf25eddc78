import { jobEventsV1 } from "@pressroom/contracts";

/**
 * A render request's `options`, one shape from the gateway to the engine. The
 * gateway's schema offers each option under its name here in snake_case (an
 * image's `format`, `width` and `height` are imageFormat, imageWidth and
 * imageHeight here: one shape holds the paper's and the image's), the job
 * contract carries them under these names (RenderOptions in
 * proto/pressroom/events/v1/jobs.proto, checked below to have exactly these
 * fields), and render prints, waits, captures and post-processes by them. So a
 * new option is its field here and in the contract, its entry in the gateway's
 * schema, and the code that uses it.
 */

export const PDFA_LEVELS = ["PDF/A-1b", "PDF/A-2b", "PDF/A-3b"] as const;
export type PdfaLevel = (typeof PDFA_LEVELS)[number];
export const IMAGE_FORMATS = ["png", "jpeg", "webp"] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];
export const MEDIA_TYPES = ["print", "screen"] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];
export const DISPOSITIONS = ["inline", "attachment"] as const;
export type Disposition = (typeof DISPOSITIONS)[number];

/** The longest download name, its extension included. */
export const MAX_FILENAME_LENGTH = 200;
/** The largest side of an image, in CSS pixels. */
export const MAX_IMAGE_SIDE = 10_000;
/** What a watermark's optional fields default to (its font size: as large as fits the page). */
export const WATERMARK_DEFAULTS = { opacity: 0.15, angle: 45 } as const;
/** A jpeg's or webp's quality when the request names none. */
export const DEFAULT_IMAGE_QUALITY = 90;
/** A url image's viewport when the request names none. */
export const DEFAULT_URL_VIEWPORT = { width: 1280, height: 800 } as const;
/** The margin a page made for raw HTML or a url starts from (Chromium's own default). */
export const DEFAULT_MARGIN = "1cm";

/** CSS lengths (px, in, cm, mm, pt, pc, or "0"); a side left out keeps the template's. */
export interface Margin {
  top?: string;
  right?: string;
  bottom?: string;
  left?: string;
}

/** When the page is ready to print or capture, after it loaded: exactly one condition. */
export interface WaitFor {
  /** Until an element matches this CSS selector. */
  selector?: string;
  /** Until this JavaScript expression is truthy. */
  expression?: string;
  /** Until no sub-request has been in flight for 500 ms. */
  networkIdle?: boolean;
  /** This many milliseconds after the load (at most 10 000). */
  delayMs?: number;
  /** The longest to wait for a selector, an expression or network idle (absent: as long as the deadline leaves). */
  timeoutMs?: number;
}

/** A rectangle of the page in CSS pixels, from its top-left corner (a screenshot's clip). */
export interface Clip {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** What the PDF says about itself (information dictionary and XMP). */
export interface PdfMetadata {
  title?: string;
  author?: string;
  subject?: string;
  keywords?: string[];
  creator?: string;
}

export interface Watermark {
  /** Drawn as selectable text across every page. */
  text: string;
  /** 0 to 1 (WATERMARK_DEFAULTS). */
  opacity?: number;
  /** Degrees counter-clockwise (WATERMARK_DEFAULTS). */
  angle?: number;
  /** Points; absent: as large as fits the page. */
  fontSize?: number;
}

export interface EncryptPermissions {
  print: boolean;
  copy: boolean;
  modify: boolean;
  annotate: boolean;
}

/** AES-256; the passwords never leave the RENDER command. */
export interface Encryption {
  userPassword?: string;
  ownerPassword: string;
  /** Absent: none allowed. */
  permissions?: EncryptPermissions;
}

/** Every option is optional: absent means the template's setting, or the default. */
export interface RenderOptions {
  /** A paper name (PAPER_FORMATS, in any case); or width and height. */
  format?: string;
  /** The paper's size as CSS lengths, instead of format. */
  width?: string;
  height?: string;
  landscape?: boolean;
  margin?: Margin;
  /** Zoom of the page's content, 0.1 to 2. */
  scale?: number;
  printBackground?: boolean;
  /** The pages to keep, e.g. "1-3,5". */
  pageRanges?: string;
  /** The document's CSS @page size wins over the paper. */
  preferCssPageSize?: boolean;
  /** The CSS media type the document is laid out for (default print). */
  media?: MediaType;
  /**
   * The running header and footer of every page. The request's are Handlebars filled with its
   * data before the engine sees them (a template's are Chromium's header templates as stored).
   */
  headerHtml?: string;
  footerHtml?: string;
  /** The BCP 47 locale and IANA time zone of the header's and footer's `date` (default: Chromium's, en-US in the machine's zone). */
  locale?: string;
  timeZone?: string;
  waitFor?: WaitFor;
  metadata?: PdfMetadata;
  /** The download's file name (made safe by safeFilename; its extension added by downloadName). */
  filename?: string;
  /** How downloads answer: Content-Disposition inline or attachment (default: attachment with a filename, else inline). */
  disposition?: Disposition;
  /** How long the output lives, and its URL with it: MIN_OUTPUT_TTL_SECONDS to the key's plan's maxOutputTtlSeconds (absent: storage's default). */
  outputTtlSeconds?: number;
  pdfa?: PdfaLevel;
  pdfua?: boolean;
  /** Bookmarks from the document's headings (h1–h6), nested by level, in a tagged PDF. */
  outline?: boolean;
  /** false: the document renders despite uncaught exceptions in its script, listed in the job's events (default true: they fail it). */
  failOnScriptError?: boolean;
  /** true: an image, stylesheet, font or script that fails to load fails the job, naming it (no query) and its status. */
  failOnResourceError?: boolean;
  watermark?: Watermark;
  encrypt?: Encryption;
  /** An image's format (default png) and, for jpeg and webp, its quality 1 to 100. */
  imageFormat?: ImageFormat;
  quality?: number;
  /** png and webp: transparent where the page paints no background. */
  omitBackground?: boolean;
  /** A url image's viewport in CSS pixels (DEFAULT_URL_VIEWPORT) and device pixels per CSS pixel (1 to 3). */
  imageWidth?: number;
  imageHeight?: number;
  deviceScaleFactor?: number;
  /**
   * A screenshot's region, at most one (none: the viewport): the whole page as tall as the
   * document (at most MAX_IMAGE_SIDE), the one element a CSS selector matches, or a clip.
   */
  fullPage?: boolean;
  selector?: string;
  clip?: Clip;
}

/** The keys of A, at any depth, that B does not have: never when A's shape lies within B's. */
export type KeysOutside<A, B> = A extends string | number | boolean | bigint | symbol | null | undefined
  ? never
  : A extends readonly (infer E)[]
    ? KeysOutside<E, B extends readonly (infer F)[] ? F : never>
    : { [K in keyof A]-?: K extends keyof B ? KeysOutside<NonNullable<A[K]>, NonNullable<B[K]>> : K }[keyof A];

/** Fails to compile, naming the keys, unless there are none (`NoKeys<KeysOutside<A, B>>`). */
export type NoKeys<T extends never> = T;
// The contract carries exactly these options, under these names.
type _ContractHasEveryOption = NoKeys<KeysOutside<RenderOptions, jobEventsV1.RenderOptions>>;
type _EveryContractFieldIsAnOption = NoKeys<KeysOutside<jobEventsV1.RenderOptions, RenderOptions>>;

/** The options as the job contract carries them. */
export function optionsToContract(options: RenderOptions): jobEventsV1.RenderOptions {
  return jobEventsV1.RenderOptions.fromPartial(options);
}

/** A job's options from its contract; a value outside an option's set (a newer gateway's) is refused, as no render could honour it. */
export function optionsOfContract(contract: jobEventsV1.RenderOptions | undefined): RenderOptions {
  if (!contract) return {};
  return {
    ...contract,
    media: oneOf(MEDIA_TYPES, contract.media, "media"),
    disposition: oneOf(DISPOSITIONS, contract.disposition, "disposition"),
    pdfa: oneOf(PDFA_LEVELS, contract.pdfa, "pdfa"),
    imageFormat: oneOf(IMAGE_FORMATS, contract.imageFormat, "image format"),
  };
}

function oneOf<T extends string>(values: readonly T[], value: string | undefined, what: string): T | undefined {
  if (value === undefined || (values as readonly string[]).includes(value)) return value as T | undefined;
  throw new Error(`unknown ${what} ${JSON.stringify(value)}`);
}

type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
/** A public (snake_case) shape under the names of this definition. */
export type CamelKeys<T> = T extends string | number | boolean | bigint | symbol | null | undefined
  ? T
  : T extends readonly (infer E)[]
    ? CamelKeys<E>[]
    : { [K in keyof T as K extends string ? Camel<K> : K]: CamelKeys<T[K]> };

/** Options as the public API names them (snake_case), under the names of this definition. */
export function camelKeys<T>(value: T): CamelKeys<T> {
  if (Array.isArray(value)) return value.map((item: unknown) => camelKeys(item)) as CamelKeys<T>;
  if (value === null || typeof value !== "object") return value as CamelKeys<T>;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()), camelKeys(item)]),
  ) as CamelKeys<T>;
}

/** A file name made safe for a Content-Disposition header and any file system ("" when nothing is left). */
export function safeFilename(name: string): string {
  return name
    .normalize("NFC")
    .replace(/[\p{Cc}/\\:*?"<>|]/gu, "_")
    .replace(/^[\s.]+|[\s.]+$/g, "")
    .slice(0, MAX_FILENAME_LENGTH);
}

/** Other spellings of an output's extension a name may already end with. */
const EXTENSION_ALIASES: Record<string, string[]> = { jpeg: ["jpg"] };

/**
 * The download's file name: the request's (made safe by the gateway) with the output's extension
 * (kept when it already ends with it, `.jpg` for a jpeg too), cut so that the whole name is at
 * most MAX_FILENAME_LENGTH characters; or `<fallbackStem>.<extension>`.
 */
export function downloadName(filename: string | undefined, fallbackStem: string, extension: string): string {
  if (!filename) return `${fallbackStem}.${extension}`;
  const lower = filename.toLowerCase();
  if ([extension, ...(EXTENSION_ALIASES[extension] ?? [])].some((ext) => lower.endsWith(`.${ext}`))) return filename;
  const stem = filename
    .slice(0, MAX_FILENAME_LENGTH - extension.length - 1)
    .replace(/[\uD800-\uDBFF]$/, "")
    .replace(/[\s.]+$/, "");
  return `${stem}.${extension}`;
}

/** The PDF/A part of a level (1, 2 or 3). */
export function pdfaPart(level: PdfaLevel): 1 | 2 | 3 {
  return Number(level.charAt(6)) as 1 | 2 | 3;
}

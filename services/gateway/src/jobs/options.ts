import type { jobEventsV1 } from "@pressroom/contracts";
import { z } from "@pressroom/platform";
import { WaitFor } from "./wait-for";
import {
  camelKeys,
  type CamelKeys,
  DEFAULT_IMAGE_QUALITY,
  DEFAULT_MARGIN,
  DEFAULT_URL_VIEWPORT,
  IMAGE_FORMATS,
  type KeysOutside,
  type NoKeys,
  MAX_FILENAME_LENGTH,
  MAX_IMAGE_SIDE,
  MAX_PAPER_IN,
  MEDIA_TYPES,
  MIN_PAPER_IN,
  MIN_PRINTABLE_IN,
  optionsToContract,
  PDFA_LEVELS,
  type RenderOptions as Options,
  safeFilename,
} from "@pressroom/domain";
import { cssLength, paperFormat, pageProblems, type PageShape } from "../paper";
import { Disposition, Encryption, Locale, OutputTtlSeconds, PdfMetadata, TimeZone, Watermark, flag } from "./option-parts";

export { Encryption, PdfMetadata, Watermark };

/**
 * The `options` object of POST /v1/render and /v1/image and the `url`
 * source, one zod schema each (shown in the OpenAPI document, checked by
 * validateJobRequest), offering the options of @pressroom/domain's
 * RenderOptions under their snake_case names (checked at compile time: a
 * schema field the definition lacks does not compile), and mapped onto the
 * job contract by name. Every object is strict: an unknown option is
 * refused, naming it. A merged document's part takes PartOptions (its page,
 * header, footer and readiness); the whole request takes RenderOptions
 * (those and what the PDF says about itself, its protection and its download
 * name).
 */

export const MAX_URL_LENGTH = 2_048;
/** header_html and footer_html, each, in UTF-8 bytes. */
export const MAX_HEADER_FOOTER_BYTES = 65_536;

export const Margin = z
  .strictObject({
    top: cssLength("Top margin").optional(),
    right: cssLength("Right margin").optional(),
    bottom: cssLength("Bottom margin").optional(),
    left: cssLength("Left margin").optional(),
  })
  .meta({
    id: "Margin",
    description:
      `Page margins; a side left out keeps the template's margin (${DEFAULT_MARGIN} for raw HTML and URLs). ` +
      `They must leave at least ${MIN_PRINTABLE_IN} inch of the paper to print on, across and down.`,
  });

const PAGE_RANGES = /^\s*\d+\s*(-\s*\d+\s*)?(,\s*\d+\s*(-\s*\d+\s*)?)*$/;

const Handlebars = (where: string) =>
  z
    .string({ error: "must be a string" })
    .max(MAX_HEADER_FOOTER_BYTES, `must be at most ${MAX_HEADER_FOOTER_BYTES} characters`)
    .refine((html) => Buffer.byteLength(html, "utf8") <= MAX_HEADER_FOOTER_BYTES, `must be at most ${MAX_HEADER_FOOTER_BYTES} bytes as UTF-8`)
    .meta({
      description:
        `The running ${where} of every page: HTML, a Handlebars template filled with the request's data. ` +
        'Elements with the classes pageNumber, totalPages, title and date are filled in per page (e.g. <span class="pageNumber"></span>). ' +
        "It is drawn in the page's margin, with no styles from the document: give it a font-size and keep the margin tall enough.",
    });

/** The options of PAGE_SHAPE: a merged document takes them per part only. */
export const PAGE_OPTIONS = [
  "format",
  "width",
  "height",
  "landscape",
  "margin",
  "scale",
  "print_background",
  "page_ranges",
  "prefer_css_page_size",
  "media",
  "header_html",
  "footer_html",
  "locale",
  "time_zone",
  "wait_for",
] as const;

/** A merged part's options and the page half of a render's: size, margins, header and footer, readiness. */
const PAGE_SHAPE = {
  format: paperFormat().optional().meta({ description: "Paper size; or give width and height instead." }),
  width: cssLength(`Paper width (with height, instead of format), ${MIN_PAPER_IN} to ${MAX_PAPER_IN} inches`).optional(),
  height: cssLength(`Paper height (with width, instead of format), ${MIN_PAPER_IN} to ${MAX_PAPER_IN} inches`).optional(),
  landscape: flag("Turn the paper sideways.").optional(),
  margin: Margin.optional(),
  scale: z
    .number({ error: "must be a number from 0.1 to 2" })
    .min(0.1, "must be from 0.1 to 2")
    .max(2, "must be from 0.1 to 2")
    .optional()
    .meta({ description: "Zoom of the page's content, 0.1 to 2 (default 1)." }),
  print_background: flag("Print background colours and images (default true).").optional(),
  page_ranges: z
    .string({ error: 'must be a string such as "1-3,5"' })
    .max(256, "must be at most 256 characters")
    .refine((ranges) => PAGE_RANGES.test(ranges) && validRanges(ranges), 'must list pages from 1, such as "1-3,5" (a range from its lower page)')
    .optional()
    .meta({
      description:
        'The pages to keep, e.g. "1-3,5" (from 1). Pages past the document\'s last are left out; ranges that select none of its pages fail the job ' +
        "(422 RENDER_FAILED, charged as the document's own failure), the message saying how many pages the document has.",
    }),
  prefer_css_page_size: flag("Let the document's CSS @page size win over format, width and height.").optional(),
  media: z
    .enum(MEDIA_TYPES, { error: `must be ${MEDIA_TYPES.join(" or ")}` })
    .optional()
    .meta({ description: "The CSS media type the document is laid out for (default print)." }),
  header_html: Handlebars("header").optional(),
  footer_html: Handlebars("footer").optional(),
  locale: Locale.optional(),
  time_zone: TimeZone.optional(),
  wait_for: WaitFor.optional(),
};

/** A download name: at most 200 characters once made safe (see safeFilename). */
const Filename = z
  .string({ error: "must be a string" })
  .max(MAX_FILENAME_LENGTH, `must be at most ${MAX_FILENAME_LENGTH} characters`)
  .refine((name) => safeFilename(name) !== "", 'must have at least one character other than / \\ : * ? " < > |, dots and spaces')
  .meta({
    description:
      `The download's file name, at most ${MAX_FILENAME_LENGTH} characters. Made safe: control characters and / \\ : * ? " < > | become _, ` +
      "leading and trailing dots and spaces go, and the output's extension is added when missing. Downloads answer " +
      'Content-Disposition: attachment; filename="…" (with filename*= for non-ASCII names), unless disposition says inline.',
  });

/** What the document's own faults do, for a render and an image alike. */
const STRICTNESS_SHAPE = {
  fail_on_script_error: flag(
    "Whether an uncaught exception (or unhandled rejection) in the document's script fails the job, 422 RENDER_FAILED naming it (default true). " +
      "false: the document renders, and the exceptions' first lines are listed in the job's job.succeeded event (GET /v1/jobs/{id}).",
  ).optional(),
  fail_on_resource_error: flag(
    "true: an image, stylesheet, font or script that fails to load (an HTTP error status, or no answer) fails the job, " +
      "422 RENDER_FAILED naming it (scheme, host and path, never its query) and its status (default false: the document renders without it).",
  ).optional(),
};

const DOCUMENT_SHAPE = {
  ...STRICTNESS_SHAPE,
  disposition: Disposition.optional(),
  output_ttl_seconds: OutputTtlSeconds.optional(),
  metadata: PdfMetadata.optional(),
  filename: Filename.optional(),
  pdfa: z
    .enum(PDFA_LEVELS, { error: `must be one of ${PDFA_LEVELS.join(", ")}` })
    .optional()
    .meta({
      description:
        "Make an archival PDF/A document of this level (every font embedded, an sRGB OutputIntent); not with encrypt or pdfua. " +
        "PDF/A-1 forbids transparency: a page that uses it (CSS opacity, colour emoji, a watermark's opacity) becomes one image. " +
        "The document loses its tag structure (the conversion does not carry it over): a PDF/A output is not tagged, hence not with pdfua.",
    }),
  pdfua: flag(
    "Make an accessible PDF/UA document (tagged, /MarkInfo, its language and title set, DisplayDocTitle, XMP pdfuaid); needs a title " +
      '(the document\'s <title> or metadata.title) and a language on its root element (<html lang="en">): without either the job fails ' +
      "(422 RENDER_FAILED, naming what is missing). Not with pdfa, nor for documents.",
  ).optional(),
  watermark: Watermark.optional(),
  encrypt: Encryption.optional(),
  outline: flag("Bookmarks from the document's headings (h1 to h6), nested by level. Not for documents.").optional(),
};

/**
 * The checks across the page fields: a paper size is format, or width and height together,
 * each side within the engine's bounds, and margins that leave something to print on.
 */
function checkPage(options: PageShape, ctx: z.core.ParsePayload<PageShape>): void {
  if ((options.width === undefined) !== (options.height === undefined)) {
    ctx.issues.push({ code: "custom", message: "width and height go together", input: options, path: [options.height === undefined ? "height" : "width"] });
  }
  if (options.format !== undefined && options.width !== undefined) {
    ctx.issues.push({ code: "custom", message: "give format or width and height, not both", input: options, path: ["format"] });
  }
  for (const { path, message } of pageProblems(options)) ctx.issues.push({ code: "custom", message, input: options, path });
}

/** The options of one part of a merged document. */
export const PartOptions = z
  .strictObject(PAGE_SHAPE)
  .check((ctx) => checkPage(ctx.value, ctx))
  .meta({ id: "PartOptions", description: "A part's page, header, footer and readiness. Unknown options are refused, naming them." });

export const RenderOptions = z
  .strictObject({ ...PAGE_SHAPE, ...DOCUMENT_SHAPE })
  .check((ctx) => {
    checkPage(ctx.value, ctx);
    if (ctx.value.pdfa !== undefined && ctx.value.encrypt !== undefined) {
      ctx.issues.push({ code: "custom", message: "PDF/A does not allow encryption: give pdfa or encrypt, not both", input: ctx.value, path: ["encrypt"] });
    }
    if (ctx.value.pdfa !== undefined && ctx.value.pdfua === true) {
      // Ghostscript's PDF/A conversion does not carry the tag structure PDF/UA needs over.
      ctx.issues.push({ code: "custom", message: "PDF/A and PDF/UA cannot be combined yet: give pdfa or pdfua, not both", input: ctx.value, path: ["pdfua"] });
    }
  })
  .meta({
    id: "RenderOptions",
    description:
      "How the PDF is made; every option is optional and overrides the template's setting. Unknown options are refused, naming them. " +
      "Without format or width and height: the template's paper, or A4 (the document's CSS @page size wins for raw HTML and URLs).",
  });

/** The options of an image, from a template or a page: its format, the page's viewport, readiness, download and strictness. */
export const IMAGE_SHAPE = {
  format: z
    .enum(IMAGE_FORMATS, { error: `must be one of ${IMAGE_FORMATS.join(", ")}` })
    .optional()
    .meta({ description: "The image format (default png)." }),
  quality: z
    .int({ error: "must be a whole number from 1 to 100" })
    .min(1, "must be from 1 to 100")
    .max(100, "must be from 1 to 100")
    .optional()
    .meta({ description: `jpeg and webp only: 1 to 100 (default ${DEFAULT_IMAGE_QUALITY}).` }),
  omit_background: flag("png and webp only: a transparent background where the page paints none.").optional(),
  width: z
    .int({ error: `must be a whole number from 1 to ${MAX_IMAGE_SIDE}` })
    .min(1, `must be from 1 to ${MAX_IMAGE_SIDE}`)
    .max(MAX_IMAGE_SIDE, `must be from 1 to ${MAX_IMAGE_SIDE}`)
    .optional()
    .meta({ description: `url only: the viewport's width in CSS pixels (default ${DEFAULT_URL_VIEWPORT.width}).` }),
  height: z
    .int({ error: `must be a whole number from 1 to ${MAX_IMAGE_SIDE}` })
    .min(1, `must be from 1 to ${MAX_IMAGE_SIDE}`)
    .max(MAX_IMAGE_SIDE, `must be from 1 to ${MAX_IMAGE_SIDE}`)
    .optional()
    .meta({ description: `url only: the viewport's height in CSS pixels (default ${DEFAULT_URL_VIEWPORT.height}).` }),
  device_scale_factor: z
    .int({ error: "must be 1, 2 or 3" })
    .min(1, "must be 1, 2 or 3")
    .max(3, "must be 1, 2 or 3")
    .optional()
    .meta({ description: "url only: device pixels per CSS pixel (default 1)." }),
  wait_for: WaitFor.optional(),
  filename: Filename.optional(),
  disposition: Disposition.optional(),
  output_ttl_seconds: OutputTtlSeconds.optional(),
  ...STRICTNESS_SHAPE,
};

/** An image's format checks: quality for jpeg and webp, a transparent background for png and webp. */
export function checkImageFormat(options: { format?: string; quality?: number; omit_background?: boolean }, ctx: z.core.ParsePayload<unknown>): void {
  const { format = "png", quality, omit_background: omit } = options;
  if (quality !== undefined && format === "png") {
    ctx.issues.push({ code: "custom", message: "quality applies to jpeg and webp only", input: options, path: ["quality"] });
  }
  if (omit && format === "jpeg") {
    ctx.issues.push({ code: "custom", message: "a jpeg has no transparency: use png or webp", input: options, path: ["omit_background"] });
  }
}

export const ImageOptions = z
  .strictObject(IMAGE_SHAPE)
  .check((ctx) => checkImageFormat(ctx.value, ctx))
  .meta({ id: "ImageOptions", description: "How the image is made; every option is optional. Unknown options are refused, naming them." });

/** The url source: an absolute http(s) URL, rendered through the same network guard as a document's sub-resources. */
export const PageUrl = z
  .string({ error: "must be an absolute http or https URL" })
  .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`)
  .refine((value) => urlProblem(value) === undefined, { error: (issue) => urlProblem(String(issue.input)) ?? "must be an absolute http or https URL" })
  .meta({
    id: "PageUrl",
    format: "uri",
    description:
      `A public page to render: an absolute http or https URL without user info, at most ${MAX_URL_LENGTH} characters. ` +
      "It is fetched through the same guard as a document's sub-resources (every address resolved and checked, every redirect checked, byte and time budgets).",
  });

function urlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute http or https URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `scheme ${url.protocol.slice(0, -1)} is not allowed: use http or https`;
  if (url.username || url.password) return "must not carry user info (user:password@)";
  return undefined;
}

function validRanges(ranges: string): boolean {
  return ranges.split(",").every((range) => {
    const [from, to = from] = range.split("-").map((page) => Number(page.trim()));
    return from! >= 1 && to! >= from!;
  });
}

export type RenderOptionsInput = z.infer<typeof RenderOptions>;
export type ImageOptionsInput = z.infer<typeof ImageOptions>;

// Every option of the schemas is an option of the domain's definition, under its camelCase name.
type _RenderOptionsAreDefined = NoKeys<KeysOutside<CamelKeys<RenderOptionsInput>, Options>>;
type _ImageOptionsAreDefined = NoKeys<KeysOutside<CamelKeys<Omit<ImageOptionsInput, "format" | "width" | "height">>, Options>>;

/** A part's or a render's options as the job contract carries them. */
export function renderOptionsOf(options: Partial<RenderOptionsInput>): jobEventsV1.RenderOptions {
  return optionsToContract({
    ...camelKeys(options),
    pageRanges: options.page_ranges?.replace(/\s+/g, ""),
    filename: options.filename === undefined ? undefined : safeFilename(options.filename),
  });
}

/** An image's (or a screenshot's) options as the job contract carries them: its format and viewport under the image's own names. */
export function imageOptionsOf(options: ImageOptionsInput): jobEventsV1.RenderOptions {
  const { format, width, height, ...rest } = options;
  return optionsToContract({
    ...camelKeys(rest),
    imageFormat: format,
    imageWidth: width,
    imageHeight: height,
    filename: options.filename === undefined ? undefined : safeFilename(options.filename),
  });
}

import type { jobEventsV1 } from "@pressroom/contracts";
import { AppError, z } from "@pressroom/platform";
import { MAX_WEBHOOK_URL_LENGTH, webhookUrlProblem } from "@pressroom/domain";
import { TemplateId } from "../api-shared";
import { bodyProblem, type FieldHints } from "../body";
import { MAX_DATA_BYTES, MAX_HTML_BYTES, grouped } from "../limits";
import { DESTINATION_HINT, Destination, destinationOf } from "./destination";
import { ImageOptions, PAGE_OPTIONS, PageUrl, PartOptions, RenderOptions, imageOptionsOf, renderOptionsOf } from "./options";
import { URL_OPTIONS_HINT, UrlOptions, urlOptionsNeedUrl, urlOptionsOf } from "./url-options";

/**
 * The bodies of POST /v1/render and /v1/image, one zod schema each: the
 * OpenAPI document shows them and validateJobRequest checks a body against
 * them, answering the first failure (see firstProblem) with the message the
 * schema gives it.
 */

export type JobKind = "render" | "image" | "screenshot";

export interface JobRequest {
  kind: JobKind;
  templateId?: string;
  /** A pinned version of the template; absent: its current version at admission. */
  templateVersion?: number;
  html?: string;
  /** The page to render, when the source is a URL. */
  url?: string;
  /** The credentials the url's page is asked for with (its own origin only). */
  urlOptions?: jobEventsV1.UrlOptions;
  data: Record<string, unknown>;
  dataJson: string;
  webhookUrl?: string;
  /** Answer 202 at once, without waiting for the render (as with webhookUrl, without a callback). */
  async?: boolean;
  /** Test mode (see TestMode): stamped TEST, counted against the key's daily test allowance. */
  test?: boolean;
  /** The request's options as the job contract carries them; absent when it sent none. */
  options?: jobEventsV1.RenderOptions;
  /** The parts of a merged PDF, in order, when the source is `documents`. */
  documents?: JobPart[];
  /** Where the output is PUT before the job succeeds. */
  destination?: jobEventsV1.Destination;
}

/** One part of a merged PDF, validated. */
export interface JobPart {
  templateId?: string;
  /** Pinned by the request, or set to the template's current version at admission. */
  templateVersion?: number;
  /** Set at admission: the key id owning the part's template, "" for the public catalog. */
  templateOwner?: string;
  /** Set at admission: the incarnation of the part's template that templateVersion belongs to. */
  templateGeneration?: number;
  html?: string;
  url?: string;
  urlOptions?: jobEventsV1.UrlOptions;
  data: Record<string, unknown>;
  dataJson: string;
  options?: jobEventsV1.RenderOptions;
}

export const Html = z
  .string({ error: "must be a string" })
  .min(1, "must not be empty")
  .check((ctx) => {
    const bytes = Buffer.byteLength(ctx.value, "utf8");
    if (bytes > MAX_HTML_BYTES) {
      const message = `${bytes} bytes is over the limit of ${MAX_HTML_BYTES} bytes (${MAX_HTML_BYTES / 1024} KB)`;
      ctx.issues.push({
        code: "custom",
        message,
        input: ctx.value,
        params: {
          hint: "Make the document smaller: link large images, fonts and stylesheets by URL instead of inlining them (an own template's html has the same limit).",
        },
      });
    }
  })
  .refine((html) => html.trim() !== "", "must not be empty")
  .meta({ description: `Raw HTML, a Handlebars template (HTML-escaped by default); at most ${grouped(MAX_HTML_BYTES)} bytes as UTF-8.` });

const TemplateVersion = z
  .int({ error: "must be a positive integer" })
  .min(1, "must be a positive integer")
  .max(2_147_483_647, "must be a positive integer")
  .meta({ description: "Pins a version of the template (see GET /v1/templates/{id}/versions); without it, the current version when the request is admitted." });

export const Data = z
  .record(z.string(), z.unknown(), {
    error: (issue) => (issue.input === undefined ? "required" : "must be a JSON object"),
  })
  .check((ctx) => {
    if (Buffer.byteLength(JSON.stringify(ctx.value), "utf8") > MAX_DATA_BYTES) {
      ctx.issues.push({ code: "custom", message: `must be at most ${MAX_DATA_BYTES} bytes as JSON`, input: ctx.value });
    }
  });

export const WebhookUrl = z
  .unknown()
  .check((ctx) => {
    const problem = webhookUrlProblem(ctx.value);
    if (problem) ctx.issues.push({ code: "custom", message: problem.replace(/^webhook_url: /, ""), input: ctx.value });
  })
  .meta({
    id: "WebhookUrl",
    type: "string",
    format: "uri",
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    pattern: "^[Hh][Tt][Tt][Pp][Ss]://",
    description: `An absolute https URL on the default port (absent or 443), without user info, at most ${grouped(MAX_WEBHOOK_URL_LENGTH)} characters. Makes the request asynchronous.`,
  });

export const Async = z.boolean({ error: "must be true or false" }).meta({
  description:
    "true: the call answers 202 at once with the job's id and Location: /v1/jobs/{id}, without waiting for the render; " +
    "poll that job (GET /v1/jobs/{id}) until it succeeded or failed. No webhook_url needed (with one, the call is asynchronous anyway). Default false.",
});

/**
 * `"test": true` on a render, image (or any request that makes a document): the output is stamped TEST on every page,
 * after the document's own content, and the job counts against the key's daily test allowance instead of its monthly
 * renders (see testAdmission in ../access/admission.ts).
 */
export const TestMode = z.boolean({ error: "must be true or false" }).meta({
  description:
    "true: test mode. The output is stamped TEST on every page (a PDF's pages, an image) by post-processing, after the document's own content, " +
    "so nothing in the document hides it. The job counts against the key's daily test allowance (test in GET /v1/keys/usage; per plan: demo 10, " +
    "free 20, starter 50, pro 200, business 1,000 a UTC day), never against the monthly renders; past it, 429 QUOTA_EXCEEDED until 00:00 UTC. " +
    "The job shows test: true. A test image is a png. Default false.",
});

/** An image body's check (`/v1/image`'s, and any route that makes an image): in test mode its format is png, the format the stamp is drawn on. */
export function testImageIsPng(ctx: { value: { test?: boolean; options?: { format?: string } }; issues: z.core.$ZodRawIssue[] }): void {
  const format = ctx.value.options?.format;
  if (ctx.value.test && format !== undefined && format !== "png") {
    ctx.issues.push({
      code: "custom",
      message: "a test-mode image is a png (its TEST stamp is drawn on the png)",
      input: ctx.value,
      path: ["options", "format"],
      params: { hint: 'Leave options.format out (or "png") with "test": true, or drop test to get a jpeg or webp.' },
    });
  }
}

/** The sources of a render: exactly one is given. */
const RENDER_SOURCES = ["template_id", "html", "url", "documents"] as const;
/** The sources of a merged document's part: exactly one is given. */
const PART_SOURCES = ["template_id", "html", "url"] as const;
export const MAX_DOCUMENTS = 20;

/** The OpenAPI form of "exactly one of `sources`". */
export const exactlyOne = (sources: readonly string[]) =>
  sources.map((source) => ({
    type: "object",
    required: [source],
    not: { anyOf: sources.filter((other) => other !== source).map((other) => ({ required: [other] })) },
  }));

export const oneSource = (sources: readonly string[]) => ({
  message: `exactly one of ${sources.join(", ")} is required`,
  params: { hint: `Send one source: ${sources.join(", ")}.` },
  // Checked even when a field is invalid: this failure is answered first.
  when: () => true,
});
export const sourcesIn = (body: Record<string, unknown>, sources: readonly string[]) => sources.filter((source) => body[source] !== undefined).length;

const versionNeedsTemplate = [
  (body: { template_id?: string; template_version?: number }) => body.template_version === undefined || body.template_id !== undefined,
  {
    message: "template_version needs template_id",
    params: { hint: "Pin a version of a stored template: send template_id with it, or drop template_version." },
  },
] as const;

/** `data` is required with these sources (a template or HTML fills its values from it); a url or documents need none. */
function dataRequiredWith(...sources: ("template_id" | "html")[]) {
  return (ctx: { value: { data?: unknown; template_id?: unknown; html?: unknown }; issues: z.core.$ZodRawIssue[] }) => {
    const source = sources.find((name) => ctx.value[name] !== undefined);
    if (ctx.value.data !== undefined || source === undefined) return;
    ctx.issues.push({
      code: "custom",
      message: `is required with ${source}`,
      input: ctx.value,
      path: ["data"],
      params: { hint: `Send a data object with the values the ${source === "html" ? "HTML" : "template"} uses, e.g. "data": {} when it uses none.` },
    });
  };
}

export const DocumentPart = z
  .strictObject({
    template_id: TemplateId.optional().meta({ description: "A pdf template." }),
    template_version: TemplateVersion.optional(),
    html: Html.optional(),
    url: PageUrl.optional(),
    url_options: UrlOptions.optional(),
    data: Data.optional().meta({ description: "Values for this part's template or HTML (default: the request's data, else {})." }),
    options: PartOptions.optional(),
  })
  .refine((part) => sourcesIn(part, PART_SOURCES) === 1, oneSource(PART_SOURCES))
  .check(urlOptionsNeedUrl)
  .refine(...versionNeedsTemplate)
  .meta({
    id: "DocumentPart",
    description: "One part of a merged PDF: exactly one source (template_id, html or url), its data and its own page options.",
    oneOf: exactlyOne(PART_SOURCES),
  });

const Documents = z
  .array(DocumentPart, { error: "must be an array of parts" })
  .min(1, "must have at least one part")
  .max(MAX_DOCUMENTS, `must have at most ${MAX_DOCUMENTS} parts`)
  .meta({
    description:
      `1 to ${MAX_DOCUMENTS} parts, each rendered in its own page and merged in order into one PDF. Each part takes one quota unit, ` +
      "admitted all or none; a failing part fails the job, its error naming the part's index (documents[0] is the first).",
  });

export const RenderRequest = z
  .strictObject({
    template_id: TemplateId.optional(),
    template_version: TemplateVersion.optional(),
    html: Html.optional(),
    url: PageUrl.optional(),
    url_options: UrlOptions.optional(),
    documents: Documents.optional(),
    data: Data.optional().meta({
      description:
        `Values for the template or HTML; must satisfy the template's data_schema. At most ${grouped(MAX_DATA_BYTES)} bytes as JSON. ` +
        "Required with template_id or html; optional (default {}) with a url, and with documents, whose parts without their own data use this one.",
    }),
    options: RenderOptions.optional(),
    webhook_url: WebhookUrl.optional(),
    async: Async.optional(),
    destination: Destination.optional(),
    test: TestMode.optional(),
  })
  .refine((body) => sourcesIn(body, RENDER_SOURCES) === 1, oneSource(RENDER_SOURCES))
  .check(dataRequiredWith("template_id", "html"))
  .check(urlOptionsNeedUrl)
  .check((ctx) => {
    if (ctx.value.documents === undefined || !ctx.value.options) return;
    for (const option of [...PAGE_OPTIONS, "pdfua", "outline"] as const) {
      if (ctx.value.options[option] === undefined) continue;
      const message =
        option === "pdfua"
          ? "a merged document keeps no tag structure, so it cannot be PDF/UA"
          : option === "outline"
            ? "a merged document keeps no outline: its parts' pages are joined without their bookmarks"
            : "applies to one part: give it in the part's options (documents[i].options)";
      ctx.issues.push({ code: "custom", message, input: ctx.value, path: ["options", option] });
    }
  })
  .refine(...versionNeedsTemplate)
  .meta({
    id: "RenderRequest",
    description:
      "Exactly one source: template_id (a pdf template, optionally with template_version), html, url or documents (a merged PDF); options override the template's page settings " +
      "(with documents, only metadata, watermark, pdfa, encrypt and filename, which apply to the merged result) and, field by field, an own template's " +
      "default options. Unknown fields are rejected, naming them.",
    oneOf: exactlyOne(RENDER_SOURCES),
  });

const IMAGE_SOURCES = ["template_id", "url"] as const;
const URL_ONLY_OPTIONS = ["width", "height", "device_scale_factor"] as const;

export const ImageRequest = z
  .strictObject({
    template_id: TemplateId.optional().meta({ description: "A png template; its width and height set the image size." }),
    template_version: TemplateVersion.optional(),
    url: PageUrl.optional(),
    url_options: UrlOptions.optional(),
    data: Data.optional().meta({
      description: "Values for the template; must satisfy its data_schema. Required with template_id; optional (default {}) with a url.",
    }),
    options: ImageOptions.optional(),
    webhook_url: WebhookUrl.optional(),
    async: Async.optional(),
    destination: Destination.optional(),
    test: TestMode.optional(),
  })
  .refine((body) => sourcesIn(body, IMAGE_SOURCES) === 1, oneSource(IMAGE_SOURCES))
  .check(dataRequiredWith("template_id"))
  .check(urlOptionsNeedUrl)
  .refine(...versionNeedsTemplate)
  .check(testImageIsPng)
  .check((ctx) => {
    if (ctx.value.url !== undefined) return;
    for (const option of URL_ONLY_OPTIONS) {
      if (ctx.value.options?.[option] !== undefined) {
        ctx.issues.push({ code: "custom", message: "applies to a url only: a template sets its own size", input: ctx.value, path: ["options", option] });
      }
    }
  })
  .meta({
    id: "ImageRequest",
    description: "Exactly one source: template_id (a png template) or url. Unknown fields are rejected, naming them.",
    oneOf: exactlyOne(IMAGE_SOURCES),
  });

/** The hints of a field's failures, where the message alone does not say what to do. */
export const HINTS: FieldHints = {
  template_id: { invalid: "Use an id from GET /v1/templates." },
  url: { invalid: `Use an absolute http:// or https:// URL, at most 2,048 characters.` },
  url_options: { invalid: URL_OPTIONS_HINT },
  options: { invalid: "See the options of this operation in GET /v1/openapi.json." },
  data: { required: 'Send a data object, e.g. "data": {} when the template needs none.' },
  webhook_url: { invalid: `Use an absolute https:// URL on the default port, without credentials, at most ${grouped(MAX_WEBHOOK_URL_LENGTH)} characters.` },
  destination: { invalid: DESTINATION_HINT, required: DESTINATION_HINT },
};

/**
 * Validates the body of POST /v1/render or /v1/image (a screenshot's: validateScreenshotRequest).
 * Returns the parsed request, or the 422 error to answer with once rate limiting has been
 * applied (the spec's check order puts the rate limit before the body).
 */
export function validateJobRequest(kind: Exclude<JobKind, "screenshot">, body: Record<string, unknown>): JobRequest | AppError {
  const common = (parsed: z.infer<typeof ImageRequest>) => ({
    kind,
    templateId: parsed.template_id,
    templateVersion: parsed.template_version,
    url: parsed.url,
    urlOptions: urlOptionsOf(parsed.url_options),
    data: parsed.data ?? {},
    dataJson: JSON.stringify(parsed.data ?? {}),
    webhookUrl: parsed.webhook_url as string | undefined,
    async: parsed.async,
    ...(parsed.destination ? { destination: destinationOf(parsed.destination) } : {}),
    test: parsed.test,
  });
  if (kind === "image") {
    const parsed = ImageRequest.safeParse(body);
    if (!parsed.success) return bodyProblem(ImageRequest, body, parsed.error, HINTS);
    return { ...common(parsed.data), options: parsed.data.options && imageOptionsOf(parsed.data.options) };
  }
  const parsed = RenderRequest.safeParse(body);
  if (!parsed.success) return bodyProblem(RenderRequest, body, parsed.error, HINTS);
  return {
    ...common({ ...parsed.data, options: undefined }),
    html: parsed.data.html,
    options: parsed.data.options && renderOptionsOf(parsed.data.options),
    documents: parsed.data.documents?.map((part) => ({
      templateId: part.template_id,
      templateVersion: part.template_version,
      html: part.html,
      url: part.url,
      urlOptions: urlOptionsOf(part.url_options),
      data: part.data ?? parsed.data.data ?? {},
      dataJson: JSON.stringify(part.data ?? parsed.data.data ?? {}),
      options: part.options && renderOptionsOf(part.options),
    })),
  };
}

/** A render request's raw HTML, each source named by its field: what the Handlebars check reads (schemas.ts). */
export function htmlSources(request: JobRequest): { field: string; html: string }[] {
  const parts = (request.documents ?? []).flatMap((part, index) => (part.html === undefined ? [] : [{ field: `documents[${index}].html`, html: part.html }]));
  return request.html === undefined ? parts : [{ field: "html", html: request.html }, ...parts];
}

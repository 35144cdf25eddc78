import { AppError, z } from "@pressroom/platform";
import { DEFAULT_URL_VIEWPORT, MAX_IMAGE_SIDE, type CamelKeys, type KeysOutside, type NoKeys, type RenderOptions as Options } from "@pressroom/domain";
import { bodyProblem } from "../body";
import { MAX_HTML_BYTES, grouped } from "../limits";
import { flag } from "./option-parts";
import { IMAGE_SHAPE, PageUrl, checkImageFormat, imageOptionsOf } from "./options";
import { Async, Data, HINTS, Html, TestMode, WebhookUrl, exactlyOne, oneSource, sourcesIn, testImageIsPng, type JobRequest } from "./request";
import { UrlOptions, urlOptionsNeedUrl, urlOptionsOf } from "./url-options";

/**
 * The body of POST /v1/screenshot: raw HTML (a Handlebars template filled with data, as for
 * /v1/render) or a url, made into an image. A screenshot is an image job (kind image) whose
 * source is its html or url: the same options as an image's from a url, and what of the page
 * it shows (full_page, selector or clip; none: the viewport).
 */

const side = (what: string) =>
  z
    .number({ error: `must be a number from 1 to ${MAX_IMAGE_SIDE}` })
    .min(1, `must be from 1 to ${MAX_IMAGE_SIDE}`)
    .max(MAX_IMAGE_SIDE, `must be from 1 to ${MAX_IMAGE_SIDE}`)
    .meta({ description: `The rectangle's ${what} in CSS pixels, 1 to ${grouped(MAX_IMAGE_SIDE)}.` });
const offset = (what: string) =>
  z
    .number({ error: "must be a number, 0 or more" })
    .min(0, "must be 0 or more")
    .meta({ description: `The rectangle's ${what} in CSS pixels from the page's top-left corner.` });

export const Clip = z
  .strictObject({ x: offset("left edge"), y: offset("top edge"), width: side("width"), height: side("height") })
  .meta({ id: "Clip", description: "A rectangle of the page, in CSS pixels of the whole page (it may lie below the viewport)." });

/** The regions a screenshot may show beyond its viewport: at most one. */
const REGIONS = ["full_page", "selector", "clip"] as const;

export const ScreenshotOptions = z
  .strictObject({
    ...IMAGE_SHAPE,
    width: IMAGE_SHAPE.width.meta({ description: `The viewport's width in CSS pixels (default ${DEFAULT_URL_VIEWPORT.width}).` }),
    height: IMAGE_SHAPE.height.meta({ description: `The viewport's height in CSS pixels (default ${DEFAULT_URL_VIEWPORT.height}).` }),
    device_scale_factor: IMAGE_SHAPE.device_scale_factor.meta({
      description: "Device pixels per CSS pixel, 1 to 3 (default 1): the image is that many times larger.",
    }),
    full_page: flag(
      `The whole page, as tall as the document (at least the viewport's height, at most ${grouped(MAX_IMAGE_SIDE)} CSS pixels; a taller page fails 422 RENDER_FAILED), ` +
        "as wide as the viewport. Default false: the viewport.",
    ).optional(),
    selector: z
      .string({ error: "must be a string" })
      .min(1, "must not be empty")
      .max(1_000, "must be at most 1000 characters")
      .optional()
      .meta({
        description:
          "A CSS selector: the image is the first element it matches, its border box wherever it lies in the page. " +
          "One that matches no element (or an element with no size) fails the job 422 RENDER_FAILED naming the selector, charged as the document's own failure.",
      }),
    clip: Clip.optional(),
  })
  .check((ctx) => {
    checkImageFormat(ctx.value, ctx);
    const given = REGIONS.filter((region) => ctx.value[region] !== undefined && ctx.value[region] !== false);
    if (given.length > 1) {
      ctx.issues.push({
        code: "custom",
        message: `give one of full_page, selector and clip, not ${given.join(" and ")}`,
        input: ctx.value,
        path: [given.at(-1)!],
        params: { hint: "The image shows the whole page (full_page), one element (selector) or a rectangle (clip): keep one." },
      });
    }
  })
  .meta({
    id: "ScreenshotOptions",
    description:
      "How the screenshot is made; every option is optional. At most one of full_page, selector and clip says what of the page it shows (none: the viewport). " +
      "Unknown options are refused, naming them.",
  });

const SCREENSHOT_SOURCES = ["html", "url"] as const;

export const ScreenshotRequest = z
  .strictObject({
    html: Html.optional(),
    url: PageUrl.optional(),
    url_options: UrlOptions.optional(),
    data: Data.optional().meta({ description: "Values for the html, a Handlebars template as for POST /v1/render (default {}); unused with a url." }),
    options: ScreenshotOptions.optional(),
    webhook_url: WebhookUrl.optional(),
    async: Async.optional(),
    test: TestMode.optional(),
  })
  .refine((body) => sourcesIn(body, SCREENSHOT_SOURCES) === 1, oneSource(SCREENSHOT_SOURCES))
  .check(urlOptionsNeedUrl)
  .check(testImageIsPng)
  .meta({
    id: "ScreenshotRequest",
    description: `Exactly one source: html (at most ${grouped(MAX_HTML_BYTES)} bytes, filled with data) or url. Unknown fields are refused, naming them.`,
    oneOf: exactlyOne(SCREENSHOT_SOURCES),
  });

export type ScreenshotOptionsInput = z.infer<typeof ScreenshotOptions>;
// Every option of the schema is an option of the domain's definition, under its camelCase name.
type _ScreenshotOptionsAreDefined = NoKeys<KeysOutside<CamelKeys<Omit<ScreenshotOptionsInput, "format" | "width" | "height">>, Options>>;

/** Validates the body of POST /v1/screenshot: the parsed request (an image job with its html or url), or the 422 to answer. */
export function validateScreenshotRequest(body: Record<string, unknown>): JobRequest | AppError {
  const parsed = ScreenshotRequest.safeParse(body);
  if (!parsed.success) return bodyProblem(ScreenshotRequest, body, parsed.error, HINTS);
  const { html, url, url_options: urlOptions, data = {}, options, webhook_url: webhookUrl, async, test } = parsed.data;
  const region = options && { fullPage: options.full_page, selector: options.selector, clip: options.clip };
  return {
    kind: "screenshot",
    html,
    url,
    data,
    dataJson: JSON.stringify(data),
    webhookUrl: webhookUrl as string | undefined,
    async,
    test,
    urlOptions: urlOptionsOf(urlOptions),
    options: options && { ...imageOptionsOf(options), ...region },
  };
}

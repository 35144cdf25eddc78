import { renderV1 } from "@pressroom/contracts";
import { AppError, z } from "@pressroom/platform";
import { TemplateId } from "../api-shared";
import { bodyProblem, type FieldHints } from "../body";
import { errors } from "../errors";
import { MAX_ASSET_BYTES, MAX_ASSETS_BYTES, MAX_DATA_BYTES, MAX_HTML_BYTES, MAX_SCHEMA_BYTES, grouped } from "../limits";
import { cssLength, paperFormat } from "../paper";
import { templateOptionsProblem } from "../template-options";

/**
 * The body of POST /v1/templates and PUT /v1/templates/{id}: one zod schema
 * (the OpenAPI document shows it). What a schema cannot express (data_schema
 * is a JSON Schema within the schema budget, sample_data satisfies it) is
 * checked on the schema threads (schemas.ts), once the request passed the
 * rate limit; the render service checks that the html compiles and renders
 * its sample_data. Its default options are checked as the options of a
 * request that renders it are (templateOptionsProblem).
 */

const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const ASSET_NAME_RULE = "an asset's name is 1 to 100 letters, digits, dots, underscores or hyphens, starting with a letter or digit (e.g. logo.png)";
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export const PageInput = z
  .strictObject({
    format: paperFormat().default("A4"),
    landscape: z.boolean().default(false),
    margin: z
      .strictObject({ top: cssLength("Top margin"), right: cssLength("Right margin"), bottom: cssLength("Bottom margin"), left: cssLength("Left margin") })
      .default({ top: "1cm", right: "1cm", bottom: "1cm", left: "1cm" }),
    header: z.literal(false, "running headers are not stored with own templates: give one per render in options.header_html").optional(),
    footer: z.literal(false, "running footers are not stored with own templates: give one per render in options.footer_html").optional(),
  })
  .meta({ id: "PageInput", description: "The catalog's page settings; defaults A4, portrait, 1 cm margins." });

const Json = (max: number) =>
  z.record(z.string(), z.unknown(), { error: "must be a JSON object" }).check((ctx) => {
    const bytes = Buffer.byteLength(JSON.stringify(ctx.value), "utf8");
    if (bytes > max) ctx.issues.push({ code: "custom", message: `${bytes} bytes is over the limit of ${grouped(max)} bytes as JSON`, input: ctx.value });
  });

const Assets = z
  .record(z.string().regex(ASSET_NAME, ASSET_NAME_RULE), z.string().regex(BASE64, "must be base64"), {
    error: (issue) => (issue.code === "invalid_key" ? ASSET_NAME_RULE : "must be an object of base64 strings"),
  })
  .check((ctx) => {
    let total = 0;
    for (const [name, base64] of Object.entries(ctx.value)) {
      const bytes = Buffer.from(base64, "base64").byteLength;
      total += bytes;
      if (bytes > MAX_ASSET_BYTES)
        ctx.issues.push({ code: "custom", message: `${name} is ${bytes} bytes, over ${grouped(MAX_ASSET_BYTES)} bytes (1 MiB)`, input: name });
    }
    if (total > MAX_ASSETS_BYTES)
      ctx.issues.push({ code: "custom", message: `${total} bytes in all, over ${grouped(MAX_ASSETS_BYTES)} bytes (5 MiB)`, input: ctx.value });
  })
  .meta({
    description:
      'Files the html refers to by relative URL (assets/logo.png), as {"<name>": "<base64>"}: each at most 1 MiB, all at most 5 MiB. ' +
      "Served to the document from the template, never fetched; fonts among them are embedded in the PDF.",
  });

/**
 * A version's default options: a JSON object here, checked by templateOptionsProblem against the options of the route that
 * renders the template (POST /v1/render's for pdf, POST /v1/image's for png); the OpenAPI document shows those schemas.
 */
const TemplateOptions = z.record(z.string(), z.unknown(), { error: "must be a JSON object" }).meta({
  description:
    "Default options of every render of this version: those of POST /v1/render (RenderOptions) for pdf, of POST /v1/image (ImageOptions, " +
    "without the url's width, height and device_scale_factor) for png, checked as a request's are. A request's options override them field by field " +
    "(margin, metadata, watermark, wait_for and the other objects per key; strings, numbers and arrays whole; a pdf's paper size as one setting, " +
    "so a request's width and height replace a default format and its format a default width and height), and the result is checked again. Default {}.",
  override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    for (const key of Object.keys(jsonSchema)) if (key !== "description") delete jsonSchema[key];
    jsonSchema.anyOf = [{ $ref: "#/components/schemas/RenderOptions" }, { $ref: "#/components/schemas/ImageOptions" }];
  },
});

const dimension = () => z.int({ error: "must be an integer from 1 to 4096" }).min(1, "must be from 1 to 4096").max(4096, "must be from 1 to 4096");

const FIELDS = {
  id: TemplateId,
  name: z.string({ error: "must be a string" }).min(1, "must not be empty").max(200, "must be at most 200 characters"),
  description: z.string({ error: "must be a string" }).max(2_000, "must be at most 2,000 characters").optional(),
  output: z.enum(["pdf", "png"], { error: 'must be "pdf" or "png"' }),
  html: z
    .string({ error: "must be a string" })
    .min(1, "must not be empty")
    .check((ctx) => {
      const bytes = Buffer.byteLength(ctx.value, "utf8");
      if (bytes > MAX_HTML_BYTES)
        ctx.issues.push({ code: "custom", message: `${bytes} bytes is over the limit of ${grouped(MAX_HTML_BYTES)} bytes`, input: ctx.value });
    })
    .meta({ description: `The Handlebars source (HTML-escaped by default), at most ${grouped(MAX_HTML_BYTES)} bytes as UTF-8.` }),
  data_schema: Json(MAX_SCHEMA_BYTES)
    .optional()
    .meta({ description: `A JSON Schema (draft 2020-12) of the data, at most ${grouped(MAX_SCHEMA_BYTES)} bytes; default {"type":"object"}.` }),
  sample_data: Json(MAX_DATA_BYTES).optional().meta({ description: "Data that satisfies data_schema: the preview renders it. Default {}." }),
  page: PageInput.optional(),
  width: dimension().optional().meta({ description: "png: the image width in CSS pixels (required)." }),
  height: dimension().optional().meta({ description: "png: the image height in CSS pixels (required)." }),
  device_scale_factor: z.union([z.literal(1), z.literal(2)], { error: "must be 1 or 2" }).optional(),
  assets: Assets.optional(),
  options: TemplateOptions.optional(),
};

/** What the fields alone cannot say: a png has its size, a pdf no size and a png no page. */
function checkOutput(ctx: z.core.ParsePayload<{ output: "pdf" | "png"; page?: unknown; width?: number; height?: number; device_scale_factor?: number }>): void {
  const t = ctx.value;
  if (t.output === "png" && (t.width === undefined || t.height === undefined)) {
    ctx.issues.push({
      code: "custom",
      message: "width and height are required for png",
      input: t,
      params: { hint: "Send the image size in CSS pixels, 1 to 4096." },
    });
  }
  if (t.output === "png" && t.page !== undefined) ctx.issues.push({ code: "custom", message: "page is for pdf templates", input: t });
  if (t.output === "pdf" && (t.width !== undefined || t.height !== undefined || t.device_scale_factor !== undefined)) {
    ctx.issues.push({ code: "custom", message: "width, height and device_scale_factor are for png templates", input: t });
  }
}

export const TemplateInput = z
  .strictObject(FIELDS)
  .check(checkOutput)
  .meta({ id: "TemplateInput", description: "An own template. Unknown fields are rejected, naming them." });

export const TemplateReplacement = z
  .strictObject({ ...FIELDS, id: TemplateId.optional().meta({ description: "The id in the path; may be left out." }) })
  .check(checkOutput)
  .meta({
    id: "TemplateReplacement",
    description: "A new version of an own template: the create's body, id optional. Unknown fields are rejected, naming them.",
  });

const HINTS: FieldHints = {
  id: { required: "Name the template: lowercase letters, digits and dashes.", invalid: "Use lowercase letters, digits and dashes, at most 64 characters." },
  html: { required: "Send the template's Handlebars source as html." },
  output: { required: 'Send "output": "pdf" (POST /v1/render) or "png" (POST /v1/image).' },
  assets: { invalid: "Send each asset as base64 under a name such as logo.png; each at most 1 MiB, all at most 5 MiB." },
};

export type TemplateInput = z.infer<typeof TemplateInput>;

/** Validates a template body; PUT's `pathId` must match its id when the body names one; its options within `plan`'s bounds. */
export function validateTemplate(body: Record<string, unknown>, plan: string, pathId?: string): TemplateInput | AppError {
  const input = pathId !== undefined && body.id === undefined ? { ...body, id: pathId } : body;
  const parsed = TemplateInput.safeParse(input);
  if (!parsed.success) return bodyProblem(TemplateInput, input, parsed.error, HINTS);
  if (pathId !== undefined && parsed.data.id !== pathId)
    return errors.payload(`id: "${parsed.data.id}" is not the id in the path ("${pathId}")`, "Leave id out of the body, or send the same id.");
  return templateOptionsProblem(parsed.data, plan) ?? parsed.data;
}

/** The template as the render service stores it. */
export function toProtoTemplate(t: TemplateInput): renderV1.Template {
  const png = t.output === "png";
  const page = t.page ?? PageInput.parse({});
  return renderV1.Template.fromPartial({
    id: t.id,
    name: t.name,
    description: t.description ?? "",
    output: png ? renderV1.OutputFormat.OUTPUT_FORMAT_PNG : renderV1.OutputFormat.OUTPUT_FORMAT_PDF,
    page: png
      ? undefined
      : {
          format: page.format,
          landscape: page.landscape,
          marginTop: page.margin.top,
          marginRight: page.margin.right,
          marginBottom: page.margin.bottom,
          marginLeft: page.margin.left,
        },
    image: png ? { width: t.width!, height: t.height!, deviceScaleFactor: t.device_scale_factor ?? 1 } : undefined,
    dataSchemaJson: JSON.stringify(t.data_schema ?? { type: "object" }),
    sampleDataJson: JSON.stringify(t.sample_data ?? {}),
    optionsJson: JSON.stringify(t.options ?? {}),
  });
}

/** The assets decoded, by name. */
export function assetsOf(t: TemplateInput): Record<string, Buffer> {
  return Object.fromEntries(Object.entries(t.assets ?? {}).map(([name, base64]) => [name, Buffer.from(base64, "base64")]));
}

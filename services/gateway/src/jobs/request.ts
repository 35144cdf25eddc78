import { AppError, z } from "@pressroom/platform";
import { MAX_WEBHOOK_URL_LENGTH, webhookUrlProblem } from "@pressroom/domain";
import { TemplateId } from "../api-shared";
import { bodyProblem, type FieldHints } from "../body";
import { MAX_DATA_BYTES, MAX_HTML_BYTES, grouped } from "../limits";

/**
 * The bodies of POST /v1/render and /v1/image, one zod schema each: the
 * OpenAPI document shows them and validateJobRequest checks a body against
 * them, answering the first failure (see firstProblem) with the message the
 * schema gives it.
 */

export type JobKind = "render" | "image";

export interface JobRequest {
  kind: JobKind;
  templateId?: string;
  /** A pinned version of the template; absent: its current version at admission. */
  templateVersion?: number;
  html?: string;
  data: Record<string, unknown>;
  dataJson: string;
  webhookUrl?: string;
}

const Html = z
  .string({ error: "must be a string" })
  .min(1, "must not be empty")
  .check((ctx) => {
    const bytes = Buffer.byteLength(ctx.value, "utf8");
    if (bytes > MAX_HTML_BYTES) {
      const message = `${bytes} bytes is over the limit of ${MAX_HTML_BYTES} bytes (${MAX_HTML_BYTES / 1024} KB)`;
      ctx.issues.push({ code: "custom", message, input: ctx.value, params: { hint: "Send a smaller document, or store it as a template." } });
    }
  })
  .refine((html) => html.trim() !== "", "must not be empty")
  .meta({ description: `Raw HTML, a Handlebars template (HTML-escaped by default); at most ${grouped(MAX_HTML_BYTES)} bytes as UTF-8.` });

const TemplateVersion = z
  .int({ error: "must be a positive integer" })
  .min(1, "must be a positive integer")
  .max(2_147_483_647, "must be a positive integer")
  .meta({ description: "Pins a version of the template (see GET /v1/templates/{id}/versions); without it, the current version when the request is admitted." });

const Data = z
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

export const RenderRequest = z
  .strictObject({
    template_id: TemplateId.optional(),
    template_version: TemplateVersion.optional(),
    html: Html.optional(),
    data: Data.meta({
      description: `Values for the template; must satisfy the template's data_schema. At most ${grouped(MAX_DATA_BYTES)} bytes as JSON.`,
    }),
    webhook_url: WebhookUrl.optional(),
  })
  .refine((body) => (body.template_id === undefined) !== (body.html === undefined), {
    message: "exactly one of template_id or html is required",
    params: { hint: "Send either template_id or html, not both." },
    // Checked even when a field is invalid: this failure is answered first.
    when: () => true,
  })
  .refine((body) => body.template_version === undefined || body.template_id !== undefined, {
    message: "template_version needs template_id",
    params: { hint: "Pin a version of a stored template: send template_id with it, or drop template_version." },
  })
  .meta({
    id: "RenderRequest",
    description: "Exactly one of template_id (a pdf template, optionally with template_version) or html. Unknown fields are rejected, naming them.",
    oneOf: [
      { type: "object", required: ["template_id"], not: { required: ["html"] } },
      { type: "object", required: ["html"], not: { required: ["template_id"] } },
    ],
  });

export const ImageRequest = z
  .strictObject({
    template_id: TemplateId.meta({ description: "A png template; its width and height set the image size." }),
    template_version: TemplateVersion.optional(),
    data: Data.meta({ description: "Values for the template; must satisfy its data_schema." }),
    webhook_url: WebhookUrl.optional(),
  })
  .meta({ id: "ImageRequest" });

/** The hints of a field's failures, where the message alone does not say what to do. */
const HINTS: FieldHints = {
  template_id: { required: "Image requests name a png template; see GET /v1/templates.", invalid: "Use an id from GET /v1/templates." },
  data: { required: 'Send a data object, e.g. "data": {} when the template needs none.' },
  webhook_url: { invalid: `Use an absolute https:// URL on the default port, without credentials, at most ${grouped(MAX_WEBHOOK_URL_LENGTH)} characters.` },
};

/**
 * Validates the body of POST /v1/render or /v1/image. Returns the parsed
 * request, or the 422 error to answer with once rate limiting has been
 * applied (the spec's check order puts the rate limit before the body).
 */
export function validateJobRequest(kind: JobKind, body: Record<string, unknown>): JobRequest | AppError {
  const schema = kind === "image" ? ImageRequest : RenderRequest;
  const parsed = schema.safeParse(body);
  if (!parsed.success) return bodyProblem(schema, body, parsed.error, HINTS);
  const { template_id: templateId, template_version: templateVersion, html, data, webhook_url: webhookUrl } = parsed.data as z.infer<typeof RenderRequest>;
  return { kind, templateId, templateVersion, html, data, dataJson: JSON.stringify(data), webhookUrl: webhookUrl as string | undefined };
}

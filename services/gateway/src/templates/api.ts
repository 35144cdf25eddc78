import { z } from "@pressroom/platform";
import type { ZodOpenApiOperationObject } from "zod-openapi";
import { TemplateId, errorResponse, headers, internal, jsonResponse } from "../api-shared";

/** The responses of templates/ (the public catalog and its previews) and their operations. */

export const PageSettings = z
  .strictObject({
    format: z.string().meta({ examples: ["A4", "Letter"] }),
    landscape: z.boolean(),
    margin: z.strictObject({ top: z.string(), right: z.string(), bottom: z.string(), left: z.string() }),
    header: z.boolean().meta({ description: "Whether pages get a running header." }),
    footer: z.boolean().meta({ description: "Whether pages get a running footer (e.g. Page X of Y)." }),
  })
  .meta({ id: "PageSettings" });

const positive = () => z.int().min(1);

export const Template = z
  .strictObject({
    id: TemplateId,
    version: positive().meta({ description: "Increases whenever the template changes." }),
    name: z.string(),
    description: z.string(),
    output: z.enum(["pdf", "png"]).meta({ description: "pdf: use POST /v1/render. png: use POST /v1/image." }),
    page: PageSettings.optional(),
    width: positive().optional().meta({ description: "png only: image width in pixels." }),
    height: positive().optional().meta({ description: "png only: image height in pixels." }),
    device_scale_factor: z
      .union([z.literal(1), z.literal(2)])
      .optional()
      .meta({ description: "png only: device pixels per pixel; at 2 (retina) the PNG is 2 × width by 2 × height." }),
    data_schema: z.looseObject({}).meta({ description: "JSON Schema (draft 2020-12) that data must satisfy." }),
    sample_data: z.looseObject({}).meta({ description: "Data that satisfies data_schema." }),
    preview_url: z.string().meta({ description: "Path of a PNG preview rendered with sample_data." }),
  })
  .meta({
    id: "Template",
    oneOf: [
      {
        type: "object",
        properties: { output: { const: "pdf" } },
        required: ["page"],
        not: { anyOf: [{ required: ["width"] }, { required: ["height"] }, { required: ["device_scale_factor"] }] },
      },
      { type: "object", properties: { output: { const: "png" } }, required: ["width", "height", "device_scale_factor"], not: { required: ["page"] } },
    ],
  });

export const TemplateList = z.strictObject({ templates: z.array(Template) }).meta({ id: "TemplateList" });

export const listTemplatesOperation: ZodOpenApiOperationObject = {
  operationId: "listTemplates",
  summary: "List the public template catalog",
  description:
    "Public: no key needed. Each entry declares its output, its page settings (pdf) or size (png), " +
    "the JSON Schema its data must satisfy, and sample data that satisfies it.",
  tags: ["Templates"],
  security: [],
  responses: {
    "200": jsonResponse("The catalog, sorted by id.", TemplateList, { "Cache-Control": headers.cacheControl }),
    "500": internal,
  },
};

export const templatePreviewOperation: ZodOpenApiOperationObject = {
  operationId: "getTemplatePreview",
  summary: "A preview of a template rendered with its sample data",
  description: "Public. Rendered once per template version and cached; conditional requests (If-None-Match) are answered 304.",
  tags: ["Templates"],
  security: [],
  requestParams: { path: z.object({ id: TemplateId }) },
  responses: {
    "200": {
      description: "The preview image.",
      headers: z.object({ "Request-Id": headers.requestId, ETag: headers.etag, "Cache-Control": headers.cacheControl }),
      content: { "image/png": { schema: z.string().meta({ contentMediaType: "image/png" }) } },
    },
    "304": { description: "Not modified since the ETag given in If-None-Match.", headers: z.object({ "Request-Id": headers.requestId, ETag: headers.etag }) },
    "404": errorResponse("No template has this id.", ["TEMPLATE_NOT_FOUND"]),
    "500": internal,
  },
};

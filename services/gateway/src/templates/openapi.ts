import { COMMON_HEADERS, errorResponse, header, internal, jsonResponse, ref } from "../openapi/shared";

/** The OpenAPI fragment of templates/: the public catalog and its previews, and their schemas. */

export const templatesOpenApiPaths = {
  "/v1/templates": {
    get: {
      operationId: "listTemplates",
      summary: "List the public template catalog",
      description:
        "Public: no key needed. Each entry declares its output, its page settings (pdf) or size (png), " +
        "the JSON Schema its data must satisfy, and sample data that satisfies it.",
      tags: ["Templates"],
      security: [],
      responses: {
        "200": jsonResponse("The catalog, sorted by id.", ref("TemplateList"), { "Cache-Control": header("Cache-Control") }),
        "500": internal,
      },
    },
  },
  "/v1/templates/{id}/preview.png": {
    get: {
      operationId: "getTemplatePreview",
      summary: "A preview of a template rendered with its sample data",
      description: "Public. Rendered once per template version and cached; conditional requests (If-None-Match) are answered 304.",
      tags: ["Templates"],
      security: [],
      parameters: [{ $ref: "#/components/parameters/TemplateId" }],
      responses: {
        "200": {
          description: "The preview image.",
          headers: { ...COMMON_HEADERS, ETag: header("ETag"), "Cache-Control": header("Cache-Control") },
          content: { "image/png": { schema: { type: "string", contentMediaType: "image/png" } } },
        },
        "304": { description: "Not modified since the ETag given in If-None-Match.", headers: { ...COMMON_HEADERS, ETag: header("ETag") } },
        "404": errorResponse("No template has this id.", ["TEMPLATE_NOT_FOUND"]),
        "500": internal,
      },
    },
  },
};

export const templatesOpenApiSchemas = {
  PageSettings: {
    type: "object",
    additionalProperties: false,
    required: ["format", "landscape", "margin", "header", "footer"],
    properties: {
      format: { type: "string", examples: ["A4", "Letter"] },
      landscape: { type: "boolean" },
      margin: {
        type: "object",
        additionalProperties: false,
        required: ["top", "right", "bottom", "left"],
        properties: { top: { type: "string" }, right: { type: "string" }, bottom: { type: "string" }, left: { type: "string" } },
      },
      header: { type: "boolean", description: "Whether pages get a running header." },
      footer: { type: "boolean", description: "Whether pages get a running footer (e.g. Page X of Y)." },
    },
  },
  Template: {
    type: "object",
    additionalProperties: false,
    required: ["id", "version", "name", "description", "output", "data_schema", "sample_data", "preview_url"],
    properties: {
      id: ref("TemplateId"),
      version: { type: "integer", minimum: 1, description: "Increases whenever the template changes." },
      name: { type: "string" },
      description: { type: "string" },
      output: { enum: ["pdf", "png"], description: "pdf: use POST /v1/render. png: use POST /v1/image." },
      page: ref("PageSettings"),
      width: { type: "integer", minimum: 1, description: "png only: image width in pixels." },
      height: { type: "integer", minimum: 1, description: "png only: image height in pixels." },
      device_scale_factor: { enum: [1, 2], description: "png only: device pixels per pixel; at 2 (retina) the PNG is 2 × width by 2 × height." },
      data_schema: { type: "object", description: "JSON Schema (draft 2020-12) that data must satisfy." },
      sample_data: { type: "object", description: "Data that satisfies data_schema." },
      preview_url: { type: "string", description: "Path of a PNG preview rendered with sample_data." },
    },
    oneOf: [
      {
        type: "object",
        properties: { output: { const: "pdf" } },
        required: ["page"],
        not: { anyOf: [{ required: ["width"] }, { required: ["height"] }, { required: ["device_scale_factor"] }] },
      },
      { type: "object", properties: { output: { const: "png" } }, required: ["width", "height", "device_scale_factor"], not: { required: ["page"] } },
    ],
  },
  TemplateList: {
    type: "object",
    additionalProperties: false,
    required: ["templates"],
    properties: { templates: { type: "array", items: ref("Template") } },
  },
};

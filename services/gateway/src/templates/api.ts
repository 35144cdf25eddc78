import { z } from "@pressroom/platform";
import type { ZodOpenApiOperationObject } from "zod-openapi";
import { KEYED, RATE_HEADERS, TemplateId, dateTime, errorResponse, forbidden, headers, jsonResponse, keyedErrors } from "../api-shared";
import { MAX_TEMPLATE_BODY_BYTES, grouped } from "../limits";
import { TemplateInput, TemplateReplacement } from "./request";

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
    preview_url: z.string().meta({
      description:
        "Path of a PNG preview rendered with sample_data: a png template's image, a pdf template's first page as printed (paper, margins, " +
        "header, footer and watermark), 96 pixels to the inch.",
    }),
    visibility: z
      .enum(["public", "private"])
      .meta({ description: "public: the catalog's, for everyone. private: the caller's own template, seen only with its key." }),
    html: z.string().optional().meta({ description: "Own templates, in GET /v1/templates/{id} and /versions/{n} only: the version's Handlebars source." }),
    asset_names: z
      .array(z.string())
      .optional()
      .meta({ description: "Own templates, with html: the names of the version's assets (their content is not answered)." }),
    assets: z
      .array(z.strictObject({ name: z.string(), size_bytes: z.int().min(0) }))
      .optional()
      .meta({
        description:
          "Own templates, with html: the version's assets by name, each with its size; the bytes are at /v1/templates/{id}/versions/{n}/assets/{name}.",
      }),
    options: z.looseObject({}).optional().meta({
      description: "Own templates, with html: the version's default options as saved ({} when none), which a request's options override field by field.",
    }),
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

/** Operations that take a key or none: without it, the public catalog; with it, the caller's own templates too (and the rate headers). */
const KEY_OPTIONAL: Record<string, string[]>[] = [{}, ...KEYED];
const WITH_KEY = "With a key: ";
const OPTIONAL_RATE_HEADERS = {
  "RateLimit-Limit": headers.rateLimitLimit.optional().meta({ description: `${WITH_KEY}requests allowed in any 60-second window by the key's plan.` }),
  "RateLimit-Remaining": headers.rateLimitRemaining.optional().meta({ description: `${WITH_KEY}requests left in the current window.` }),
  "RateLimit-Reset": headers.rateLimitReset.optional().meta({ description: `${WITH_KEY}seconds until the oldest counted request leaves the window.` }),
};
const notFound = (rate: typeof RATE_HEADERS | typeof OPTIONAL_RATE_HEADERS) =>
  errorResponse(
    "No template has this id for this key: another account's template is answered exactly like one that does not exist.",
    ["TEMPLATE_NOT_FOUND"],
    rate,
  );
const versionNotFound = errorResponse(
  "TEMPLATE_NOT_FOUND: no template has this id for this key (another account's template is answered exactly like one that does not exist). " +
    "TEMPLATE_VERSION_NOT_FOUND: the template has no version n (the message names the versions it has; GET /v1/templates/{id}/versions lists them).",
  ["TEMPLATE_NOT_FOUND", "TEMPLATE_VERSION_NOT_FOUND"],
  OPTIONAL_RATE_HEADERS,
);
/** The 403 of a change to a template: the public catalog's are read-only. */
const readOnly = () =>
  forbidden("TEMPLATE_READ_ONLY: the id names a template of the public catalog, which no account may change or delete. ", ["TEMPLATE_READ_ONLY"]);

/** The errors of an operation a caller without a key may use: theirs are limited per client address. */
const KEY_OPTIONAL_ERRORS = {
  ...keyedErrors,
  "429": errorResponse("RATE_LIMITED: too many requests this minute: the key's plan's limit, or without a key, this address's.", ["RATE_LIMITED"], {
    ...OPTIONAL_RATE_HEADERS,
    "Retry-After": headers.retryAfter,
  }),
};

export const listTemplatesOperation: ZodOpenApiOperationObject = {
  operationId: "listTemplates",
  summary: "List the template catalog, and with a key your own templates",
  description:
    "No key needed: the public catalog. With a key, the caller's own templates too (visibility private), never another account's. " +
    "Each entry declares its output, its page settings (pdf) or size (png), the JSON Schema its data must satisfy, and sample data that satisfies it.",
  tags: ["Templates"],
  security: KEY_OPTIONAL,
  responses: {
    "200": jsonResponse("The templates, sorted by id.", TemplateList, { "Cache-Control": headers.cacheControl, ...OPTIONAL_RATE_HEADERS }),
    ...KEY_OPTIONAL_ERRORS,
  },
};

export const TemplateVersions = z
  .strictObject({ versions: z.array(z.strictObject({ version: positive(), created_at: dateTime() })).meta({ description: "Newest first." }) })
  .meta({ id: "TemplateVersions" });

const BODY_RULES =
  `At most ${grouped(MAX_TEMPLATE_BODY_BYTES)} bytes of JSON. The template is rendered once with its sample_data (its preview) before it is stored: ` +
  "a preview is a render of its own kind, admitted after the body and the id are checked: it holds one of the key's concurrency slots while it renders " +
  "and counts one against the month's previews (previews in GET /v1/keys/usage; not the render quota), charged when it rendered or failed for the " +
  "template (RENDER_FAILED) or when the caller went away, refunded when it failed on our side. It is stored with the version: reading it later renders nothing. " +
  "data_schema must stay within the schema budget: patterns run on a linear-time engine (no backreferences or lookaround), uniqueItems needs a maxItems " +
  "of at most 1,000, an enum at most 1,000 values, subschemas nest at most 32 deep, $ref only inside the schema and never in a loop that does not descend " +
  "into the data, $id at the root only; a schema past it is refused, naming the keyword, and checking data against it has a time budget (1 s).";

/** A preview refused by metering: its allowance, or the key's slots. */
const PREVIEW_ADMISSION = (rate: typeof RATE_HEADERS | typeof OPTIONAL_RATE_HEADERS) =>
  errorResponse(
    "RATE_LIMITED: too many requests this minute (without a key: from this address). QUOTA_EXCEEDED: the month's previews are used up (the hint says so). " +
      "CONCURRENCY_EXCEEDED: the key's renders and previews in flight fill its plan's slots.",
    ["RATE_LIMITED", "QUOTA_EXCEEDED", "CONCURRENCY_EXCEEDED"],
    { ...rate, "Retry-After": headers.retryAfter },
  );

const SAVE_ERRORS = {
  "422": errorResponse(
    "PAYLOAD_INVALID: the body failed validation (unknown field, id pattern, html over 512 KB, data_schema not a JSON Schema or over 64 KB, " +
      "sample_data not satisfying it, html that does not compile (the message names line and column), assets over their limits, " +
      "options that a render (pdf) or image (png) of the template could not send, naming options.<field>). " +
      "RENDER_FAILED: the preview failed (script error, timeout, limits); no version was made.",
    ["PAYLOAD_INVALID", "RENDER_FAILED"],
    RATE_HEADERS,
  ),
  "429": PREVIEW_ADMISSION(RATE_HEADERS),
};

const TEMPLATE_LOCATION = z
  .string()
  .regex(/^\/v1\/templates\/[a-z0-9][a-z0-9-]{0,63}$/)
  .meta({ header: { id: "TemplateLocation" }, description: "The new template's resource, /v1/templates/<id>." });

export const createTemplateOperation: ZodOpenApiOperationObject = {
  operationId: "createTemplate",
  summary: "Create an own template",
  description: `A template of the caller's account, private to it. ${BODY_RULES} After a delete, the same id can be created again, starting again at version 1; jobs admitted before the delete still render the version they were admitted with.`,
  tags: ["Templates"],
  security: KEYED,
  requestBody: { required: true, content: { "application/json": { schema: TemplateInput } } },
  responses: {
    "201": jsonResponse("Created: the template's first version.", Template, { ...RATE_HEADERS, Location: TEMPLATE_LOCATION }),
    "403": forbidden("TEMPLATE_LIMIT_REACHED: the plan stores no more templates (the hint names the plan and its limit). ", ["TEMPLATE_LIMIT_REACHED"]),
    "409": errorResponse(
      "TEMPLATE_EXISTS: the public catalog or this account already has a template with this id (the hint says to pick another id, or for the account's own, to replace it with PUT).",
      ["TEMPLATE_EXISTS"],
      RATE_HEADERS,
    ),
    ...keyedErrors,
    ...SAVE_ERRORS,
  },
};

const idParam = { path: z.object({ id: TemplateId }) };

export const replaceTemplateOperation: ZodOpenApiOperationObject = {
  operationId: "replaceTemplate",
  summary: "Replace an own template (a new version)",
  description: `The same body as the create (id may be left out); the template's next version, used by every render admitted from now on that does not pin a version. Versions are immutable. ${BODY_RULES}`,
  tags: ["Templates"],
  security: KEYED,
  requestParams: idParam,
  requestBody: { required: true, content: { "application/json": { schema: TemplateReplacement } } },
  responses: {
    "200": jsonResponse("The new version.", Template, RATE_HEADERS),
    "403": readOnly(),
    "404": notFound(RATE_HEADERS),
    ...keyedErrors,
    ...SAVE_ERRORS,
  },
};

export const getTemplateOperation: ZodOpenApiOperationObject = {
  operationId: "getTemplate",
  summary: "A template's current version",
  tags: ["Templates"],
  security: KEY_OPTIONAL,
  requestParams: idParam,
  responses: { "200": jsonResponse("The template.", Template, OPTIONAL_RATE_HEADERS), "404": notFound(OPTIONAL_RATE_HEADERS), ...KEY_OPTIONAL_ERRORS },
};

export const templateVersionsOperation: ZodOpenApiOperationObject = {
  operationId: "listTemplateVersions",
  summary: "A template's versions",
  tags: ["Templates"],
  security: KEY_OPTIONAL,
  requestParams: idParam,
  responses: {
    "200": jsonResponse(
      "Its versions, newest first (of an own template created again after a delete, the new one's only).",
      TemplateVersions,
      OPTIONAL_RATE_HEADERS,
    ),
    "404": notFound(OPTIONAL_RATE_HEADERS),
    ...KEY_OPTIONAL_ERRORS,
  },
};

export const templateVersionOperation: ZodOpenApiOperationObject = {
  operationId: "getTemplateVersion",
  summary: "One version of a template",
  tags: ["Templates"],
  security: KEY_OPTIONAL,
  requestParams: { path: z.object({ id: TemplateId, n: z.string().regex(/^[1-9]\d{0,9}$/) }) },
  responses: { "200": jsonResponse("That version.", Template, OPTIONAL_RATE_HEADERS), "404": versionNotFound, ...KEY_OPTIONAL_ERRORS },
};

/** The media types render answers a template's asset with, by its extension (render's engine/network.ts); anything else is application/octet-stream. */
const ASSET_MEDIA_TYPES = [
  "text/css",
  "text/javascript",
  "application/json",
  "image/svg+xml",
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
  "font/woff",
  "font/woff2",
  "font/ttf",
  "font/otf",
  "application/octet-stream",
];

export const templateAssetOperation: ZodOpenApiOperationObject = {
  operationId: "getTemplateAsset",
  summary: "One asset of a version of an own template",
  description:
    "The bytes of a file the version carries (a font, image or stylesheet its html names as assets/<name>), for its owner only, " +
    "with the media type its extension gives (application/octet-stream when none). Always a download (Content-Disposition: attachment, " +
    "a sandboxing Content-Security-Policy): an asset is never run as a page of the API's origin. " +
    "Another account's template or a public one: 404 TEMPLATE_NOT_FOUND; a version the template does not have: 404 TEMPLATE_VERSION_NOT_FOUND; " +
    "a name the version has no asset of: 404 NOT_FOUND.",
  tags: ["Templates"],
  security: KEYED,
  requestParams: { path: z.object({ id: TemplateId, n: z.string().regex(/^[1-9]\d{0,9}$/), name: z.string() }) },
  responses: {
    "200": {
      description: "The asset's bytes.",
      headers: z.object({
        "Request-Id": headers.requestId,
        "Content-Length": headers.contentLength,
        "Content-Disposition": headers.contentDisposition,
        "Cache-Control": headers.cacheControl,
        ...RATE_HEADERS,
      }),
      content: Object.fromEntries(ASSET_MEDIA_TYPES.map((type) => [type, { schema: z.string().meta({ contentMediaType: type }) }])),
    },
    "404": errorResponse(
      "TEMPLATE_NOT_FOUND: no own template has this id for this key. TEMPLATE_VERSION_NOT_FOUND: it has no version n (the message names its versions). " +
        "NOT_FOUND: the version has no asset of this name.",
      ["TEMPLATE_NOT_FOUND", "TEMPLATE_VERSION_NOT_FOUND", "NOT_FOUND"],
      RATE_HEADERS,
    ),
    ...keyedErrors,
  },
};

export const deleteTemplateOperation: ZodOpenApiOperationObject = {
  operationId: "deleteTemplate",
  summary: "Delete an own template",
  description: "From now on renders naming it get 404 TEMPLATE_NOT_FOUND; jobs admitted before finish with their version.",
  tags: ["Templates"],
  security: KEYED,
  requestParams: idParam,
  responses: {
    "204": { description: "Deleted.", headers: z.object({ "Request-Id": headers.requestId, ...RATE_HEADERS }) },
    "403": readOnly(),
    "404": notFound(RATE_HEADERS),
    ...keyedErrors,
  },
};

const PREVIEW_PNG = { "image/png": { schema: z.string().meta({ contentMediaType: "image/png" }) } };

/** GET preview.png of the current version or of one version: the same answers. */
const previewOperation = (
  operation: Pick<ZodOpenApiOperationObject, "operationId" | "summary" | "description" | "requestParams">,
  missing: ReturnType<typeof errorResponse>,
): ZodOpenApiOperationObject => ({
  ...operation,
  tags: ["Templates"],
  security: KEY_OPTIONAL,
  responses: {
    "200": {
      description: "The preview image.",
      headers: z.object({ "Request-Id": headers.requestId, ETag: headers.etag, "Cache-Control": headers.cacheControl, ...OPTIONAL_RATE_HEADERS }),
      content: PREVIEW_PNG,
    },
    "304": {
      description: "Not modified since the ETag given in If-None-Match.",
      headers: z.object({ "Request-Id": headers.requestId, ETag: headers.etag, ...OPTIONAL_RATE_HEADERS }),
    },
    "404": missing,
    "422": errorResponse("RENDER_FAILED: the preview failed (script error, its deadline, limits); charged.", ["RENDER_FAILED"], RATE_HEADERS),
    ...keyedErrors,
    "429": PREVIEW_ADMISSION(OPTIONAL_RATE_HEADERS),
  },
});

const PREVIEW_RULES =
  "Public for the catalog's templates; an own template's with its key. Rendered once per template version and stored: a read that finds it renders " +
  "nothing and counts nothing. An own template's not yet stored (saved before previews were stored) is rendered as one of the key's previews: " +
  "admitted and counted like a save's (previews in GET /v1/keys/usage). Without a key, reads are kept for a few seconds and limited per client address. " +
  "Conditional requests (If-None-Match) are answered 304.";

export const templatePreviewOperation = previewOperation(
  {
    operationId: "getTemplatePreview",
    summary: "A preview of a template rendered with its sample data",
    description: `The current version's. ${PREVIEW_RULES}`,
    requestParams: { path: z.object({ id: TemplateId }) },
  },
  notFound(OPTIONAL_RATE_HEADERS),
);

export const templateVersionPreviewOperation = previewOperation(
  {
    operationId: "getTemplateVersionPreview",
    summary: "The preview of one version of a template",
    description:
      `Each version keeps its own preview, rendered with that version's sample data (an own template's preview_url points here), so that two versions ` +
      `can be compared. ${PREVIEW_RULES}`,
    requestParams: { path: z.object({ id: TemplateId, n: z.string().regex(/^[1-9]\d{0,9}$/) }) },
  },
  versionNotFound,
);

export const previewDraftOperation: ZodOpenApiOperationObject = {
  operationId: "previewTemplateDraft",
  summary: "Preview an unsaved template",
  description:
    "Renders a draft (the body of POST /v1/templates; id may be left out) with its sample_data as a save renders its preview, and stores nothing: " +
    "no template, no version, no preview. The body is checked like a save's first (422 before anything is admitted; a source that does not compile " +
    "names its line and column). The render is one of the key's previews: it holds one of the key's concurrency slots while it renders and counts one " +
    "against the month's previews (previews in GET /v1/keys/usage), charged when it rendered or failed for the template (RENDER_FAILED) or when the " +
    "caller went away, refunded when it failed on our side. The console's editor calls it as you type.",
  tags: ["Templates"],
  security: KEYED,
  requestBody: { required: true, content: { "application/json": { schema: TemplateReplacement } } },
  responses: {
    "200": {
      description: "The draft rendered with its sample data, as the template's preview would be.",
      headers: z.object({ "Request-Id": headers.requestId, "Cache-Control": headers.cacheControl, ...RATE_HEADERS }),
      content: PREVIEW_PNG,
    },
    "403": forbidden(),
    ...keyedErrors,
    "422": errorResponse(
      "PAYLOAD_INVALID: the body failed validation as a save's would (html that does not compile: the message names line and column). " +
        "RENDER_FAILED: the draft failed to render (script error, timeout, limits); charged.",
      ["PAYLOAD_INVALID", "RENDER_FAILED"],
      RATE_HEADERS,
    ),
    "429": PREVIEW_ADMISSION(RATE_HEADERS),
  },
};

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import type { GatewayDeps } from "./deps";
import { openApiDocument } from "./openapi";
import { routes } from "./routes";

/**
 * The served OpenAPI document compared, field by field, with the one served
 * before it was generated from the routes' zod schemas (openapi.before.json,
 * saved from the hand-written document). Every place where the two may differ
 * is listed here (JSON pointers; `*` stands for any one segment) with its
 * reason; anything else that differs fails, and so does a listed place that
 * no longer differs.
 */
const ERROR_CODE_PART = ["/paths/*/*/responses/*/content/application~1json/schema/allOf/1", "/components/responses/*/content/application~1json/schema/allOf/1"];
/** The nullable fields, and the keys of each that changed. */
const NULLABLE: Record<string, Record<string, string[]>> = {
  Job: {
    started_at: ["type", "format", "anyOf"],
    finished_at: ["type", "format", "anyOf"],
    url: ["type", "format", "anyOf"],
    expires_at: ["type", "format", "anyOf"],
    size_bytes: ["type", "minimum", "anyOf"],
    error: ["oneOf", "anyOf"],
    webhook: ["oneOf", "anyOf"],
  },
  WebhookEvent: { url: ["type", "format", "anyOf"], expires_at: ["type", "format", "anyOf"], error: ["oneOf", "anyOf"] },
};
/** The schemas added since, after the ones served before. */
const NEW_SCHEMAS = ["PageUrl", "RenderOptions", "PartOptions", "ImageOptions", "WaitFor", "Margin", "PdfMetadata", "Watermark", "Encryption", "DocumentPart"];
const INTENDED_DIFFERENCES: Record<string, string[]> = {
  "An error response's part that narrows code is a zod object: it also says code is a string, that it is required, and that other fields are allowed (the Error schema beside it still allows none).":
    ERROR_CODE_PART.flatMap((part) => [`${part}/properties/code/type`, `${part}/required`, `${part}/additionalProperties`]),
  "zod-openapi writes the description of a header or parameter in its schema as well.": [
    "/paths/*/*/responses/*/headers/*/schema/description",
    "/paths/*/*/parameters/*/schema/description",
    "/components/headers/*/schema/description",
    "/components/parameters/*/schema/description",
  ],
  "zod integers are safe integers: their schema states the maximum 2^53 − 1.": [
    "/components/headers/*/schema/maximum",
    "/components/schemas/RenderSucceeded/properties/size_bytes/maximum",
    "/components/schemas/Template/properties/*/maximum",
    "/components/schemas/Usage/properties/*/properties/*/maximum",
  ],
  "zod writes the type beside an enum or a constant (the same values).": [
    "/paths/~1v1~1billing~1stripe~1webhook/post/responses/200/content/application~1json/schema/properties/*/type",
    "/components/schemas/RenderSucceeded/properties/status/type",
    "/components/schemas/RenderSucceeded/properties/content_type/type",
    "/components/schemas/JobAccepted/properties/status/type",
    "/components/schemas/Job/properties/status/type",
    "/components/schemas/Job/properties/kind/type",
    "/components/schemas/Template/properties/output/type",
    "/components/schemas/Plan/type",
    "/components/schemas/PaidPlan/type",
    "/components/schemas/Usage/properties/rate_limit/properties/window_seconds/type",
    "/components/schemas/SignupResponse/properties/plan/type",
    "/components/schemas/WebhookEvent/properties/type/type",
    "/components/schemas/WebhookEvent/properties/status/type",
    "/components/schemas/Health/properties/status/type",
  ],
  "A nullable value is written anyOf [the value, null] (with oneOf before, and type lists): the same values.": [
    ...Object.entries(NULLABLE).flatMap(([schema, fields]) =>
      Object.entries(fields).flatMap(([field, keys]) => keys.map((key) => `/components/schemas/${schema}/properties/${field}/${key}`)),
    ),
  ],
  "A schema that takes any fields says so explicitly (additionalProperties: {}, and propertyNames for the data record).": [
    "/components/schemas/RenderRequest/properties/data/propertyNames",
    "/components/schemas/RenderRequest/properties/data/additionalProperties",
    "/components/schemas/ImageRequest/properties/data/propertyNames",
    "/components/schemas/ImageRequest/properties/data/additionalProperties",
    "/components/schemas/Template/properties/data_schema/properties",
    "/components/schemas/Template/properties/data_schema/additionalProperties",
    "/components/schemas/Template/properties/sample_data/properties",
    "/components/schemas/Template/properties/sample_data/additionalProperties",
    "/components/schemas/WebhookEvent/additionalProperties",
    "/paths/~1v1~1billing~1checkout~1{id}/post/requestBody/content/application~1x-www-form-urlencoded/schema/additionalProperties",
    "/paths/~1v1~1billing~1stripe~1webhook/post/requestBody/content/application~1json/schema/properties",
    "/paths/~1v1~1billing~1stripe~1webhook/post/requestBody/content/application~1json/schema/additionalProperties",
  ],
  "GET /v1/openapi.json's answer also says openapi is a string and info and paths are objects.": [
    "/paths/~1v1~1openapi.json/get/responses/200/content/application~1json/schema/properties",
    "/paths/~1v1~1openapi.json/get/responses/200/content/application~1json/schema/additionalProperties",
  ],
  "Optional is the default of a parameter and a header: required: false is no longer written.": [
    "/components/parameters/IdempotencyKey/required",
    "/components/headers/Idempotent-Replayed/required",
  ],
  "A pattern is written as the regular expression's source, with / escaped: the same pattern.": [
    "/components/headers/Location/schema/pattern",
    "/paths/~1v1~1billing~1checkout~1{id}/post/responses/303/headers/Location/schema/pattern",
  ],
  "ImageRequest's template_id refers to TemplateId with $ref beside its description (OpenAPI 3.1), not through allOf.": [
    "/components/schemas/ImageRequest/properties/template_id/allOf",
    "/components/schemas/ImageRequest/properties/template_id/$ref",
  ],
  "The preview's id parameter is written in place (its schema still refers to TemplateId), not as the components.parameters.TemplateId only it used.": [
    "/components/parameters/TemplateId",
    "/paths/~1v1~1templates~1{id}~1preview.png/get/parameters/0",
  ],
  "Issue 33: a render's source may be a url and an image's too, both take options; the schemas of the url and the options are new.": [
    "/components/schemas/RenderRequest/description",
    "/components/schemas/RenderRequest/properties/data/description",
    "/components/schemas/RenderRequest/properties/url",
    "/components/schemas/RenderRequest/properties/options",
    "/components/schemas/RenderRequest/oneOf",
    "/components/schemas/ImageRequest/description",
    "/components/schemas/ImageRequest/required",
    "/components/schemas/ImageRequest/properties/data/description",
    "/components/schemas/ImageRequest/properties/url",
    "/components/schemas/ImageRequest/properties/options",
    "/components/schemas/ImageRequest/oneOf",
    ...NEW_SCHEMAS.map((schema) => `/components/schemas/${schema}`),
  ],
  "Issue 33: a render's source may be documents, the parts of a merged PDF (DocumentPart, among the new schemas).": [
    "/components/schemas/RenderRequest/properties/documents",
  ],
  "Issue 33: the operations describe the url source and the options; an image may be jpeg or webp; a download named by options.filename is an attachment.": [
    "/paths/~1v1~1render/post/description",
    "/paths/~1v1~1render/post/responses/200/headers/Content-Disposition/description",
    "/paths/~1v1~1render/post/responses/422/description",
    "/paths/~1v1~1image/post/description",
    "/paths/~1v1~1image/post/responses/200/description",
    "/paths/~1v1~1image/post/responses/200/headers/Content-Disposition/description",
    "/paths/~1v1~1image/post/responses/200/content/image~1jpeg",
    "/paths/~1v1~1image/post/responses/200/content/image~1webp",
    "/paths/~1v1~1image/post/responses/422/description",
    "/paths/~1v1~1outputs~1{id}/get/responses/200/content/image~1jpeg",
    "/paths/~1v1~1outputs~1{id}/get/responses/200/content/image~1webp",
    "/components/headers/Content-Disposition/description",
    "/components/headers/Content-Disposition/schema/pattern",
    "/components/schemas/RenderSucceeded/properties/content_type/enum",
    "/components/schemas/RenderSucceeded/properties/content_type/description",
  ],
  "Issue 32, customers' own templates: their routes, the catalog's and the preview's optional key, the codes TEMPLATE_EXISTS and TEMPLATE_LIMIT_REACHED, visibility, template_version (requests, jobs) and their schemas.":
    [
      "/info/description",
      "/tags/1/description",
      "/paths/~1v1~1templates/get",
      "/paths/~1v1~1templates/post",
      "/paths/~1v1~1templates~1{id}~1preview.png/get/description",
      "/paths/~1v1~1templates~1{id}~1preview.png/get/security",
      "/paths/~1v1~1templates~1{id}~1preview.png/get/responses/*/headers/RateLimit-Limit",
      "/paths/~1v1~1templates~1{id}~1preview.png/get/responses/*/headers/RateLimit-Remaining",
      "/paths/~1v1~1templates~1{id}~1preview.png/get/responses/*/headers/RateLimit-Reset",
      "/paths/~1v1~1templates~1{id}~1preview.png/get/responses/404/description",
      "/paths/~1v1~1templates~1{id}~1preview.png/get/responses/401",
      "/paths/~1v1~1templates~1{id}~1preview.png/get/responses/429",
      "/paths/~1v1~1templates~1{id}",
      "/paths/~1v1~1templates~1{id}~1versions",
      "/paths/~1v1~1templates~1{id}~1versions~1{n}",
      "/components/schemas/Error/properties/code/enum",
      "/components/schemas/RenderRequest/description",
      "/components/schemas/RenderRequest/properties/template_version",
      "/components/schemas/ImageRequest/properties/template_version",
      "/components/schemas/Job/required",
      "/components/schemas/Job/properties/template_version",
      "/components/schemas/Template/required",
      "/components/schemas/Template/properties/visibility",
      "/components/schemas/TemplateInput",
      "/components/schemas/TemplateReplacement",
      "/components/schemas/PageInput",
      "/components/schemas/TemplateVersions",
    ],
  "Issue 41, the console: the session cookie beside the bearer key on every keyed operation, a session's refusals (403 CSRF_REJECTED, DEMO_KEY_READ_ONLY) on those that change anything, the lists (jobs, daily usage, webhook deliveries) and a delivery's replay, the session's routes, an own template's source, their tags and schemas.":
    [
      "/tags/5",
      "/tags/6",
      "/paths/*/*/security/1",
      "/paths/~1v1~1render/post/responses/403",
      "/paths/~1v1~1image/post/responses/403",
      "/paths/~1v1~1billing~1checkout/post/responses/403",
      "/paths/~1v1~1keys~1webhook-secret~1rotate/post/responses/403",
      "/paths/~1v1~1keys~1usage~1daily",
      "/paths/~1v1~1jobs",
      "/paths/~1v1~1webhooks~1deliveries",
      "/paths/~1v1~1webhooks~1deliveries~1{id}~1replay",
      "/paths/~1console~1session",
      "/components/securitySchemes/cookieAuth",
      "/components/schemas/Template/properties/html",
      "/components/schemas/Template/properties/asset_names",
      ...["JobList", "DailyUsage", "DeliveryId", "Delivery", "DeliveryList", "SessionRequest", "Session"].map((schema) => `/components/schemas/${schema}`),
    ],
  "device_scale_factor is anyOf two constants, 1 and 2, rather than an enum of them.": [
    "/components/schemas/Template/properties/device_scale_factor/enum",
    "/components/schemas/Template/properties/device_scale_factor/anyOf",
  ],
};

type Json = unknown;

/** The JSON pointers (RFC 6901) where `actual` and `expected` differ: a value, a missing or an extra key. */
function differences(actual: Json, expected: Json, pointer = ""): string[] {
  if (typeof actual !== "object" || typeof expected !== "object" || actual === null || expected === null) {
    return Object.is(actual, expected) ? [] : [pointer];
  }
  if (Array.isArray(actual) !== Array.isArray(expected)) return [pointer];
  const a = actual as Record<string, Json>;
  const e = expected as Record<string, Json>;
  const keys = [...new Set([...Object.keys(e), ...Object.keys(a)])];
  return keys.flatMap((key) => {
    const child = `${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
    if (!(key in a) || !(key in e)) return [child];
    return differences(a[key], e[key], child);
  });
}

const before = JSON.parse(readFileSync(path.join(__dirname, "openapi.before.json"), "utf8")) as Record<string, Record<string, unknown>>;
const now = JSON.parse(JSON.stringify(openApiDocument(routes({ clients: {}, bus: {} } as unknown as GatewayDeps)))) as Record<string, Record<string, unknown>>;
const ALLOWED = Object.values(INTENDED_DIFFERENCES).flat();
/** Whether a pointer is `allowed` (segment by segment, `*` matching any one) or under it. */
const matches = (pointer: string, allowed: string) => {
  const parts = pointer.split("/");
  const pattern = allowed.split("/");
  return parts.length >= pattern.length && pattern.every((part, i) => part === "*" || part === parts[i]);
};
const intended = (pointer: string) => ALLOWED.find((allowed) => matches(pointer, allowed));

describe("the served OpenAPI document, compared with the one served before", () => {
  it("differs only where a difference is intended", () => {
    const unintended = differences(now, before).filter((pointer) => !intended(pointer));
    assert.deepEqual(unintended, []);
  });

  it("lists no intended difference that is not one", () => {
    const found = new Set(differences(now, before).map(intended));
    assert.deepEqual(
      ALLOWED.filter((allowed) => !found.has(allowed)),
      [],
    );
  });

  it("keeps the order of the paths and the schemas that were there before (GET /docs shows them in this order)", () => {
    const kept = (keys: string[], earlier: Record<string, unknown>) => keys.filter((key) => key in earlier);
    assert.deepEqual(kept(Object.keys(now.paths!), before.paths!), Object.keys(before.paths!));
    const schemasBefore = (before.components as Record<string, Record<string, unknown>>).schemas!;
    assert.deepEqual(kept(Object.keys((now.components as Record<string, object>).schemas!), schemasBefore), Object.keys(schemasBefore));
  });
});

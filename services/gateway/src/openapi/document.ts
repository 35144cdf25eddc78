/**
 * The OpenAPI 3.1 document of Pressroom's public HTTP API, maintained by hand
 * and served at GET /v1/openapi.json. The gateway's unit test holds it to the
 * route table (routes.ts) and the e2e suite validates every real response it
 * sees against it, so it cannot drift from the code.
 *
 * Each feature keeps the paths of its routes, and the schemas only it uses,
 * beside its handlers (<feature>/openapi.ts). This file holds what they share
 * (the info, the tags, the security scheme, the parameters, headers and
 * responses, the Error and TemplateId schemas) and merges the fragments.
 */

import { TEMPLATE_ID_PATTERN } from "@pressroom/platform";
import { billingOpenApiPaths, billingOpenApiSchemas } from "../billing/openapi";
import { jobsOpenApiPaths, jobsOpenApiSchemas, jobsOpenApiWebhooks } from "../jobs/openapi";
import { keysOpenApiPaths, keysOpenApiSchemas } from "../keys/openapi";
import { metaOpenApiPaths, metaOpenApiSchemas } from "../meta/openapi";
import { outputsOpenApiPaths } from "../outputs/openapi";
import { templatesOpenApiPaths, templatesOpenApiSchemas } from "../templates/openapi";
import { ERROR_CODES, errorResponse, header, ref } from "./shared";

/**
 * The order of the document's paths and schemas, which is the order GET /docs
 * (Swagger UI) shows the operations of a tag and the schemas in: the order
 * they were added to the API. A path or schema a fragment defines must be
 * listed here, and each listed one defined exactly once, or building the
 * document throws (at startup, and in the unit test).
 */
const PATH_ORDER = [
  "/v1/render",
  "/v1/image",
  "/v1/templates",
  "/v1/templates/{id}/preview.png",
  "/v1/keys/usage",
  "/v1/keys/webhook-secret",
  "/v1/keys/webhook-secret/rotate",
  "/v1/billing/checkout",
  "/v1/signup",
  "/v1/jobs/{id}",
  "/v1/outputs/{id}",
  "/v1/openapi.json",
  "/v1/billing/checkout/{id}",
  "/v1/billing/stripe/webhook",
  "/livez",
  "/readyz",
];

const SCHEMA_ORDER = [
  "Error",
  "TemplateId",
  "JobId",
  "WebhookUrl",
  "RenderRequest",
  "ImageRequest",
  "RenderSucceeded",
  "JobAccepted",
  "Job",
  "PageSettings",
  "Template",
  "TemplateList",
  "Plan",
  "PaidPlan",
  "Usage",
  "WebhookSecret",
  "RotatedWebhookSecret",
  "CheckoutRequest",
  "CheckoutSession",
  "SignupRequest",
  "SignupResponse",
  "WebhookEvent",
  "Health",
];

/** Merges fragments into one object whose keys are in `order`; throws on a key defined twice, unlisted or missing. */
function merge(what: string, order: readonly string[], fragments: readonly Record<string, unknown>[]): Record<string, unknown> {
  const merged = new Map<string, unknown>();
  for (const fragment of fragments) {
    for (const [key, value] of Object.entries(fragment)) {
      if (merged.has(key)) throw new Error(`OpenAPI document: ${what} "${key}" is defined twice`);
      merged.set(key, value);
    }
  }
  const unlisted = [...merged.keys()].filter((key) => !order.includes(key));
  const undefinedKeys = order.filter((key) => !merged.has(key));
  if (unlisted.length || undefinedKeys.length) {
    const problem = `not in its order list: ${unlisted.join(", ") || "none"}; listed but not defined: ${undefinedKeys.join(", ") || "none"}`;
    throw new Error(`OpenAPI document: ${what} ${problem}`);
  }
  return Object.fromEntries(order.map((key) => [key, merged.get(key)]));
}

/** The schemas more than one feature uses. */
const SHARED_SCHEMAS = {
  Error: {
    type: "object",
    description: "The body of every error response: exactly these three fields.",
    additionalProperties: false,
    required: ["error", "code", "hint"],
    properties: {
      error: { type: "string", minLength: 1, description: "A message for people; it names the failing field where there is one." },
      code: { type: "string", enum: [...ERROR_CODES], description: "Machine-readable; clients branch on this, never on the message." },
      hint: { type: "string", minLength: 1, description: "What to do about it." },
    },
  },
  TemplateId: { type: "string", pattern: TEMPLATE_ID_PATTERN.source, examples: ["invoice"] },
};

export const openApiDocument = {
  openapi: "3.1.0",
  info: {
    title: "Pressroom API",
    version: "1.0.0",
    summary: "Render documents (PDF) and images (PNG) from templates or HTML.",
    description: [
      "Send a template id (or raw HTML) and a JSON data object; get back a PDF (POST /v1/render) or a PNG (POST /v1/image) " +
        "behind an expiring signed download URL, at once or by a signed webhook.",
      "",
      "**Authentication.** Keyed operations take `Authorization: Bearer <API_KEY>`. " +
        "The public demo key `pr_demo_public_try_pressroom_2026` has the demo plan (50 renders a month, 3 requests a minute, 1 render at a time). " +
        "Get your own with POST /v1/signup.",
      "",
      "**Limits.** Every keyed request counts toward the plan's requests per minute (at most N in any 60 s) " +
        "and carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset. " +
        "An accepted render or image counts toward the monthly quota (UTC calendar month); a render that fails through the service's own fault is refunded. " +
        "Every 429 carries Retry-After (seconds).",
      "",
      "| plan | renders / month | requests / minute | concurrent renders |\n" +
        "|---|---|---|---|\n" +
        "| demo | 50 | 3 | 1 |\n" +
        "| free | 100 | 10 | 1 |\n" +
        "| starter (9 USD) | 1,000 | 60 | 2 |\n" +
        "| pro (29 USD) | 10,000 | 300 | 5 |\n" +
        "| business (99 USD) | 100,000 | 1,000 | 10 |",
      "",
      "**Errors.** Every error response, on every path, is `application/json` with exactly three fields: " +
        "`error` (a message for people), `code` (branch on this) and `hint` (what to do). " +
        "An unknown path answers 404 NOT_FOUND; a known path with another method answers 405 METHOD_NOT_ALLOWED with an Allow header; " +
        "a request the HTTP parser cannot read answers 422 PAYLOAD_INVALID.",
      "",
      "Every response carries Request-Id (the trace id of the request); quote it to support.",
    ].join("\n"),
  },
  servers: [{ url: "http://localhost:8080", description: "Local (./scripts/up.sh)" }],
  tags: [
    { name: "Rendering", description: "Documents and images, sync or async." },
    { name: "Templates", description: "The public template catalog." },
    { name: "Account", description: "Keys, usage, webhook secret, billing." },
    { name: "Outputs", description: "Signed download URLs of rendered outputs." },
    { name: "Meta", description: "This document and the process's health." },
  ],
  security: [],
  paths: merge("path", PATH_ORDER, [jobsOpenApiPaths, templatesOpenApiPaths, keysOpenApiPaths, billingOpenApiPaths, outputsOpenApiPaths, metaOpenApiPaths]),
  webhooks: jobsOpenApiWebhooks,
  components: {
    securitySchemes: {
      bearerAuth: {
        type: "http",
        scheme: "bearer",
        bearerFormat: "pr_live_<base62>",
        description:
          "Authorization: Bearer <API_KEY>. A missing, malformed, unknown or revoked key is 401 AUTH_INVALID; a revocation takes effect within seconds.",
      },
    },
    parameters: {
      TemplateId: { name: "id", in: "path", required: true, schema: ref("TemplateId") },
      IdempotencyKey: {
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description:
          "Makes a retry safe: a unique value per operation (e.g. a UUID), sent again unchanged with every retry of it. Scoped to the API key, kept 24 h.",
        schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,255}$" },
      },
    },
    headers: {
      "Request-Id": {
        description: "The trace id of the request (a random id of the same form where the request is not traced).",
        required: true,
        schema: { type: "string", pattern: "^[0-9a-f]{32}$" },
      },
      "RateLimit-Limit": {
        description: "Requests allowed in any 60-second window by the key's plan.",
        required: true,
        schema: { type: "integer", minimum: 0 },
      },
      "RateLimit-Remaining": { description: "Requests left in the current window.", required: true, schema: { type: "integer", minimum: 0 } },
      "RateLimit-Reset": {
        description: "Seconds until the oldest counted request leaves the window.",
        required: true,
        schema: { type: "integer", minimum: 0 },
      },
      "Retry-After": { description: "Seconds to wait before retrying.", required: true, schema: { type: "integer", minimum: 1 } },
      Location: {
        description: "The job's status resource, /v1/jobs/<id>.",
        required: true,
        schema: { type: "string", pattern: "^/v1/jobs/job_[0-9a-z]{26}$" },
      },
      "WWW-Authenticate": { description: "The authentication scheme: Bearer.", required: true, schema: { type: "string", pattern: "^Bearer " } },
      ETag: { description: "Changes when the template changes.", required: true, schema: { type: "string" } },
      "Cache-Control": { description: "Caching policy.", required: true, schema: { type: "string" } },
      "Content-Length": { description: "Size of the file in bytes.", required: true, schema: { type: "integer", minimum: 0 } },
      "Content-Disposition": {
        description: "inline, with a file name such as invoice-job_….pdf.",
        required: true,
        schema: { type: "string", pattern: '^inline; filename="[^"]+"' },
      },
      "Referrer-Policy": {
        description: "no-referrer: the signed URL never leaks through a Referer header.",
        required: true,
        schema: { type: "string", const: "no-referrer" },
      },
      Allow: { description: "The methods the path supports.", required: true, schema: { type: "string" } },
      "Idempotent-Replayed": {
        description: "true when this is the recorded response of an earlier request with the same Idempotency-Key (absent otherwise).",
        required: false,
        schema: { type: "string", const: "true" },
      },
    },
    responses: {
      NotFound: errorResponse("No such route (any unknown path).", ["NOT_FOUND"]),
      MethodNotAllowed: errorResponse("The path exists but not with this method.", ["METHOD_NOT_ALLOWED"], { Allow: header("Allow") }),
      MalformedRequest: errorResponse("The HTTP parser could not read the request.", ["PAYLOAD_INVALID"]),
    },
    schemas: merge("schema", SCHEMA_ORDER, [
      SHARED_SCHEMAS,
      jobsOpenApiSchemas,
      templatesOpenApiSchemas,
      keysOpenApiSchemas,
      billingOpenApiSchemas,
      metaOpenApiSchemas,
    ]),
  },
};

/**
 * The OpenAPI 3.1 document of Pressroom's public HTTP API, maintained by hand
 * and served at GET /v1/openapi.json. The gateway's unit test holds it to the
 * route table (app.ts) and the e2e suite validates every real response it
 * sees against it, so it cannot drift from the code. The billing routes'
 * paths are kept beside their handlers (billing/openapi.ts) and merged in here.
 */

import { billingOpenApiPaths } from "./billing/openapi";

const ERROR_CODES = [
  "AUTH_INVALID",
  "PAYLOAD_INVALID",
  "TEMPLATE_NOT_FOUND",
  "RATE_LIMITED",
  "QUOTA_EXCEEDED",
  "CONCURRENCY_EXCEEDED",
  "SIGNUP_THROTTLED",
  "AUTH_EMAIL_EXISTS",
  "RENDER_FAILED",
  "NOT_FOUND",
  "METHOD_NOT_ALLOWED",
  "URL_INVALID",
  "URL_EXPIRED",
  "PLAN_INVALID",
  "IDEMPOTENCY_KEY_REUSED",
  "INTERNAL_ERROR",
  "UNAVAILABLE",
] as const;

type ErrorCode = (typeof ERROR_CODES)[number];

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The rate-limit headers every keyed response carries once the key is known. */
const RATE_HEADERS = {
  "RateLimit-Limit": { $ref: "#/components/headers/RateLimit-Limit" },
  "RateLimit-Remaining": { $ref: "#/components/headers/RateLimit-Remaining" },
  "RateLimit-Reset": { $ref: "#/components/headers/RateLimit-Reset" },
};

const COMMON_HEADERS = { "Request-Id": header("Request-Id") };

/** On the operations that take an Idempotency-Key: the headers of a response that may be a replay. */
const REPLAYABLE_HEADERS = { ...RATE_HEADERS, "Idempotent-Replayed": header("Idempotent-Replayed") };

const IDEMPOTENCY_DESCRIPTION =
  " **Idempotency-Key** (optional header, 1–255 visible ASCII characters, scoped to the API key, kept 24 h, exact across servers): the same key with the same body again answers the first response (status and body, the same job id) with `Idempotent-Replayed: true`, counted once against the quota; a duplicate while the first request is still running waits for it (sync) or gets the same 202 (async). The same key with another body is 422 IDEMPOTENCY_KEY_REUSED. A first request refused before it was admitted (401, 404, 422 PAYLOAD_INVALID, 429) or answered 5xx leaves the key unused, so retry it with the same key.";

function errorResponse(description: string, codes: readonly ErrorCode[], headers: Record<string, unknown> = {}) {
  return {
    description,
    headers: { ...COMMON_HEADERS, ...headers },
    content: {
      "application/json": {
        schema: { allOf: [ref("Error"), { type: "object", properties: { code: { enum: [...codes] } } }] },
      },
    },
  };
}

function jsonResponse(description: string, schema: unknown, headers: Record<string, unknown> = {}) {
  return { description, headers: { ...COMMON_HEADERS, ...headers }, content: { "application/json": { schema } } };
}

const unauthorized = errorResponse("The API key is missing, malformed, unknown or revoked.", ["AUTH_INVALID"], {
  "WWW-Authenticate": header("WWW-Authenticate"),
});
const internal = errorResponse("A server-side failure (including a dependency that is briefly unavailable); safe to retry with backoff.", ["INTERNAL_ERROR"]);
const rateLimited = errorResponse("More than the plan's requests per minute.", ["RATE_LIMITED"], { ...RATE_HEADERS, "Retry-After": header("Retry-After") });

const keyedErrors = {
  "401": unauthorized,
  "429": rateLimited,
  "500": internal,
};

const JOB_REQUEST_ERRORS = {
  "401": unauthorized,
  "404": errorResponse("The template does not exist.", ["TEMPLATE_NOT_FOUND"], RATE_HEADERS),
  "422": errorResponse(
    "The body failed validation (PAYLOAD_INVALID: wrong content type, malformed or oversized body, nesting deeper than 64 levels, unknown field, template_id pattern, html over 524,288 bytes, bad webhook_url, data not an object or not matching the template's data_schema, malformed Idempotency-Key; the message names the field), the document could not be rendered (RENDER_FAILED: an uncaught exception in its script, whose first line the message gives, render timeout, output too large), or the Idempotency-Key was used with another body (IDEMPOTENCY_KEY_REUSED).",
    ["PAYLOAD_INVALID", "RENDER_FAILED", "IDEMPOTENCY_KEY_REUSED"],
    REPLAYABLE_HEADERS,
  ),
  "429": errorResponse(
    "RATE_LIMITED: too many requests this minute. QUOTA_EXCEEDED: the monthly render quota is used up. CONCURRENCY_EXCEEDED: too many renders in flight. Checked in that order, after the key, the body and the template.",
    ["RATE_LIMITED", "QUOTA_EXCEEDED", "CONCURRENCY_EXCEEDED"],
    { ...RATE_HEADERS, "Retry-After": header("Retry-After") },
  ),
  "500": internal,
};

function jobOperation(kind: "render" | "image") {
  const isImage = kind === "image";
  return {
    operationId: isImage ? "createImage" : "createRender",
    summary: isImage ? "Render a PNG image from a png template" : "Render a PDF from a template or raw HTML",
    description:
      `${isImage ? "Renders a png template (its width and height) filled with data." : "Renders a pdf template, or raw HTML (a Handlebars template too), filled with data."} ` +
      "Without webhook_url the call waits for the render (up to 60 s) and answers 200 with a signed download URL; a job still running then is answered 202 like an async one. " +
      "With webhook_url it answers 202 at once and the result arrives by a signed callback (see webhooks). " +
      "Checks run in this order: key (401), rate limit (429 RATE_LIMITED), body (422), template exists (404), monthly quota (429 QUOTA_EXCEEDED), concurrency (429 CONCURRENCY_EXCEEDED)." +
      IDEMPOTENCY_DESCRIPTION,
    tags: ["Rendering"],
    security: [{ bearerAuth: [] }],
    parameters: [{ $ref: "#/components/parameters/IdempotencyKey" }],
    requestBody: {
      required: true,
      content: { "application/json": { schema: ref(isImage ? "ImageRequest" : "RenderRequest") } },
    },
    responses: {
      "200": jsonResponse("Rendered (sync). The url is a signed, expiring download link: treat it like the document itself.", ref("RenderSucceeded"), REPLAYABLE_HEADERS),
      "202": jsonResponse("Accepted: the job runs in the background. Poll Location, or wait for the webhook.", ref("JobAccepted"), {
        ...REPLAYABLE_HEADERS,
        Location: header("Location"),
      }),
      ...JOB_REQUEST_ERRORS,
    },
    callbacks: {
      jobFinished: {
        "{$request.body#/webhook_url}": {
          post: {
            summary: "The job finished (only when webhook_url was given)",
            description: "Signed with the key's webhook secret: X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of t + \".\" + raw body>. Verify before parsing; reject when |now − t| > 300 s.",
            parameters: [{ name: "X-Service-Signature", in: "header", required: true, schema: { type: "string", pattern: "^t=\\d+,v1=[0-9a-f]{64}(,v1=[0-9a-f]{64})*$" } }],
            requestBody: { required: true, content: { "application/json": { schema: ref("WebhookEvent") } } },
            responses: { "2XX": { description: "Delivered. Any other answer (or none within the timeout) is retried with backoff." } },
          },
        },
      },
    },
  };
}

export const openApiDocument = {
  openapi: "3.1.0",
  info: {
    title: "Pressroom API",
    version: "1.0.0",
    summary: "Render documents (PDF) and images (PNG) from templates or HTML.",
    description: [
      "Send a template id (or raw HTML) and a JSON data object; get back a PDF (POST /v1/render) or a PNG (POST /v1/image) behind an expiring signed download URL, at once or by a signed webhook.",
      "",
      "**Authentication.** Keyed operations take `Authorization: Bearer <API_KEY>`. The public demo key `pr_demo_public_try_pressroom_2026` has the demo plan (50 renders a month, 3 requests a minute, 1 render at a time). Get your own with POST /v1/signup.",
      "",
      "**Limits.** Every keyed request counts toward the plan's requests per minute (at most N in any 60 s) and carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset. An accepted render or image counts toward the monthly quota (UTC calendar month); a render that fails through the service's own fault is refunded. Every 429 carries Retry-After (seconds).",
      "",
      "| plan | renders / month | requests / minute | concurrent renders |\n|---|---|---|---|\n| demo | 50 | 3 | 1 |\n| free | 100 | 10 | 1 |\n| starter (9 USD) | 1,000 | 60 | 2 |\n| pro (29 USD) | 10,000 | 300 | 5 |\n| business (99 USD) | 100,000 | 1,000 | 10 |",
      "",
      "**Errors.** Every error response, on every path, is `application/json` with exactly three fields: `error` (a message for people), `code` (branch on this) and `hint` (what to do). An unknown path answers 404 NOT_FOUND; a known path with another method answers 405 METHOD_NOT_ALLOWED with an Allow header; a request the HTTP parser cannot read answers 422 PAYLOAD_INVALID.",
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
  paths: {
    "/v1/render": { post: jobOperation("render") },
    "/v1/image": { post: jobOperation("image") },
    "/v1/templates": {
      get: {
        operationId: "listTemplates",
        summary: "List the public template catalog",
        description: "Public: no key needed. Each entry declares its output, its page settings (pdf) or size (png), the JSON Schema its data must satisfy, and sample data that satisfies it.",
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
    "/v1/keys/usage": {
      get: {
        operationId: "getUsage",
        summary: "The calling key's standing in the current period",
        tags: ["Account"],
        security: [{ bearerAuth: [] }],
        responses: {
          "200": jsonResponse("Usage of the calling key.", ref("Usage"), RATE_HEADERS),
          ...keyedErrors,
        },
      },
    },
    "/v1/keys/webhook-secret": {
      get: {
        operationId: "getWebhookSecret",
        summary: "The calling key's webhook signing secret",
        description: "One secret per key (whsec_ + 32 random bytes), created with the key. Use it only to verify callbacks; keep it server-side.",
        tags: ["Account"],
        security: [{ bearerAuth: [] }],
        responses: {
          "200": jsonResponse("The secret.", ref("WebhookSecret"), RATE_HEADERS),
          ...keyedErrors,
        },
      },
    },
    "/v1/keys/webhook-secret/rotate": {
      post: {
        operationId: "rotateWebhookSecret",
        summary: "Replace the calling key's webhook secret",
        description:
          "Makes a new secret and answers it (GET /v1/keys/webhook-secret answers it from now on too). For 24 hours, until previous_secret_expires_at, callbacks carry two v1 signatures in X-Service-Signature (t=…,v1=<new>,v1=<previous>) and two in webhook-signature, so receivers can switch secrets without losing a callback: accept a header when any v1 matches. Rotating again within the 24 hours ends the older secret at once. No request body.",
        tags: ["Account"],
        security: [{ bearerAuth: [] }],
        responses: {
          "200": jsonResponse("The new secret.", ref("RotatedWebhookSecret"), RATE_HEADERS),
          ...keyedErrors,
        },
      },
    },
    "/v1/billing/checkout": {
      post: {
        operationId: "createCheckout",
        summary: "Start an upgrade of the calling key's plan",
        description: "Answers a checkout URL; opening it and paying upgrades the key's plan." + IDEMPOTENCY_DESCRIPTION.replace(" (sync) or gets the same 202 (async)", ""),
        tags: ["Account"],
        security: [{ bearerAuth: [] }],
        parameters: [{ $ref: "#/components/parameters/IdempotencyKey" }],
        requestBody: { required: true, content: { "application/json": { schema: ref("CheckoutRequest") } } },
        responses: {
          "201": jsonResponse("A checkout session.", ref("CheckoutSession"), REPLAYABLE_HEADERS),
          "401": unauthorized,
          "422": errorResponse(
            "The body failed validation (PAYLOAD_INVALID), the plan is not an upgrade of the key's plan (PLAN_INVALID), or the Idempotency-Key was used with another body (IDEMPOTENCY_KEY_REUSED).",
            ["PAYLOAD_INVALID", "PLAN_INVALID", "IDEMPOTENCY_KEY_REUSED"],
            REPLAYABLE_HEADERS,
          ),
          "429": rateLimited,
          "500": internal,
        },
      },
    },
    "/v1/signup": {
      post: {
        operationId: "signup",
        summary: "Get a free-plan API key for an e-mail address",
        description: "Public. The key is shown once, in this response, and stored only as a hash: keep it. Throttled per client IP address (a few signups an hour).",
        tags: ["Account"],
        security: [],
        requestBody: { required: true, content: { "application/json": { schema: ref("SignupRequest") } } },
        responses: {
          "201": jsonResponse("The new key.", ref("SignupResponse"), { "Cache-Control": header("Cache-Control") }),
          "409": errorResponse("The e-mail address already has a key.", ["AUTH_EMAIL_EXISTS"]),
          "422": errorResponse("The body failed validation, or the e-mail address is not valid.", ["PAYLOAD_INVALID"]),
          "429": errorResponse("Too many signups from this IP address.", ["SIGNUP_THROTTLED"], { "Retry-After": header("Retry-After") }),
          "500": internal,
        },
      },
    },
    "/v1/jobs/{id}": {
      get: {
        operationId: "getJob",
        summary: "One of the calling key's jobs, with its event history",
        tags: ["Rendering"],
        security: [{ bearerAuth: [] }],
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" }, description: "The id returned by POST /v1/render or /v1/image." }],
        responses: {
          "200": jsonResponse("The job.", ref("Job"), RATE_HEADERS),
          "401": unauthorized,
          "404": errorResponse("No job with this id belongs to the calling key.", ["NOT_FOUND"], RATE_HEADERS),
          "429": rateLimited,
          "500": internal,
        },
      },
    },
    "/v1/outputs/{id}": {
      get: {
        operationId: "downloadOutput",
        summary: "Download a rendered output by its signed URL",
        description:
          "Authorised by the URL's signature, not by a key: anyone holding the URL can download the output until it expires, so pass it point to point and keep it out of logs. " +
          "exp is the expiry in Unix seconds; sig is the hex HMAC-SHA256 of \"<id>.<exp>\". Outputs live 24 hours by default and are deleted after.",
        tags: ["Outputs"],
        security: [],
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string" } },
          { name: "exp", in: "query", required: true, schema: { type: "string", pattern: "^\\d+$" }, description: "Expiry, Unix seconds." },
          { name: "sig", in: "query", required: true, schema: { type: "string", pattern: "^[0-9a-f]{64}$" }, description: "Signature." },
        ],
        responses: {
          "200": {
            description: "The output file.",
            headers: {
              ...COMMON_HEADERS,
              "Content-Length": header("Content-Length"),
              "Content-Disposition": header("Content-Disposition"),
              "Referrer-Policy": header("Referrer-Policy"),
              "Cache-Control": header("Cache-Control"),
            },
            content: {
              "application/pdf": { schema: { type: "string", contentMediaType: "application/pdf" } },
              "image/png": { schema: { type: "string", contentMediaType: "image/png" } },
            },
          },
          "403": errorResponse("The URL was modified (id, exp or sig) or is malformed.", ["URL_INVALID"]),
          "410": errorResponse("The URL has expired, or the output was deleted.", ["URL_EXPIRED"]),
          "500": internal,
        },
      },
    },
    "/v1/openapi.json": {
      get: {
        operationId: "getOpenApi",
        summary: "This document",
        tags: ["Meta"],
        security: [],
        responses: {
          "200": jsonResponse("The OpenAPI 3.1 document of the public API.", { type: "object", required: ["openapi", "info", "paths"] }, { "Cache-Control": header("Cache-Control") }),
        },
      },
    },
    ...billingOpenApiPaths,
    "/livez": {
      get: {
        operationId: "livez",
        summary: "Liveness: the process runs",
        tags: ["Meta"],
        security: [],
        responses: { "200": jsonResponse("Alive.", ref("Health")) },
      },
    },
    "/readyz": {
      get: {
        operationId: "readyz",
        summary: "Readiness: the process can serve traffic",
        tags: ["Meta"],
        security: [],
        responses: { "200": jsonResponse("Ready.", ref("Health")), "503": errorResponse("Not ready: starting, shutting down, or a dependency is unreachable.", ["UNAVAILABLE"]) },
      },
    },
  },
  webhooks: {
    jobFinished: {
      post: {
        summary: "A job with webhook_url finished",
        description:
          "POSTed to the request's webhook_url. Header X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 over t + \".\" + the raw body, keyed with the key's webhook secret>. " +
          "Verify on the raw body before parsing JSON, compare in constant time, and reject when |now − t| > 300 s. The event id is the same on every retry: use it to deduplicate.",
        parameters: [{ name: "X-Service-Signature", in: "header", required: true, schema: { type: "string" } }],
        requestBody: { required: true, content: { "application/json": { schema: ref("WebhookEvent") } } },
        responses: { "2XX": { description: "Delivered; anything else is retried with backoff." } },
      },
    },
  },
  components: {
    securitySchemes: {
      bearerAuth: {
        type: "http",
        scheme: "bearer",
        bearerFormat: "pr_live_<base62>",
        description: "Authorization: Bearer <API_KEY>. A missing, malformed, unknown or revoked key is 401 AUTH_INVALID; a revocation takes effect within seconds.",
      },
    },
    parameters: {
      TemplateId: { name: "id", in: "path", required: true, schema: ref("TemplateId") },
      IdempotencyKey: {
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description: "Makes a retry safe: a unique value per operation (e.g. a UUID), sent again unchanged with every retry of it. Scoped to the API key, kept 24 h.",
        schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,255}$" },
      },
    },
    headers: {
      "Request-Id": { description: "The trace id of the request (a random id of the same form where the request is not traced).", required: true, schema: { type: "string", pattern: "^[0-9a-f]{32}$" } },
      "RateLimit-Limit": { description: "Requests allowed in any 60-second window by the key's plan.", required: true, schema: { type: "integer", minimum: 0 } },
      "RateLimit-Remaining": { description: "Requests left in the current window.", required: true, schema: { type: "integer", minimum: 0 } },
      "RateLimit-Reset": { description: "Seconds until the oldest counted request leaves the window.", required: true, schema: { type: "integer", minimum: 0 } },
      "Retry-After": { description: "Seconds to wait before retrying.", required: true, schema: { type: "integer", minimum: 1 } },
      Location: { description: "The job's status resource, /v1/jobs/<id>.", required: true, schema: { type: "string", pattern: "^/v1/jobs/job_[0-9a-z]{26}$" } },
      "WWW-Authenticate": { description: "The authentication scheme: Bearer.", required: true, schema: { type: "string", pattern: "^Bearer " } },
      ETag: { description: "Changes when the template changes.", required: true, schema: { type: "string" } },
      "Cache-Control": { description: "Caching policy.", required: true, schema: { type: "string" } },
      "Content-Length": { description: "Size of the file in bytes.", required: true, schema: { type: "integer", minimum: 0 } },
      "Content-Disposition": { description: "inline, with a file name such as invoice-job_….pdf.", required: true, schema: { type: "string", pattern: "^inline; filename=\"[^\"]+\"" } },
      "Referrer-Policy": { description: "no-referrer: the signed URL never leaks through a Referer header.", required: true, schema: { type: "string", const: "no-referrer" } },
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
    schemas: {
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
      TemplateId: { type: "string", pattern: "^[a-z0-9][a-z0-9-]{0,63}$", examples: ["invoice"] },
      JobId: { type: "string", pattern: "^job_[0-9a-z]{26}$" },
      WebhookUrl: {
        type: "string",
        format: "uri",
        maxLength: 2048,
        pattern: "^[Hh][Tt][Tt][Pp][Ss]://",
        description: "An absolute https URL on the default port (absent or 443), without user info, at most 2,048 characters. Makes the request asynchronous.",
      },
      RenderRequest: {
        type: "object",
        additionalProperties: false,
        required: ["data"],
        description: "Exactly one of template_id (a pdf template) or html. Unknown fields are rejected, naming them.",
        properties: {
          template_id: ref("TemplateId"),
          html: { type: "string", minLength: 1, description: "Raw HTML, a Handlebars template (HTML-escaped by default); at most 524,288 bytes as UTF-8." },
          data: { type: "object", description: "Values for the template; must satisfy the template's data_schema. At most 262,144 bytes as JSON." },
          webhook_url: ref("WebhookUrl"),
        },
        oneOf: [
          { type: "object", required: ["template_id"], not: { required: ["html"] } },
          { type: "object", required: ["html"], not: { required: ["template_id"] } },
        ],
      },
      ImageRequest: {
        type: "object",
        additionalProperties: false,
        required: ["template_id", "data"],
        properties: {
          template_id: { allOf: [ref("TemplateId")], description: "A png template; its width and height set the image size." },
          data: { type: "object", description: "Values for the template; must satisfy its data_schema." },
          webhook_url: ref("WebhookUrl"),
        },
      },
      RenderSucceeded: {
        type: "object",
        additionalProperties: false,
        required: ["id", "status", "url", "expires_at", "content_type", "size_bytes"],
        properties: {
          id: ref("JobId"),
          status: { const: "succeeded" },
          url: { type: "string", format: "uri", description: "Signed download URL: <base>/v1/outputs/<id>?exp=<unix seconds>&sig=<hex>." },
          expires_at: { type: "string", format: "date-time" },
          content_type: { enum: ["application/pdf", "image/png"] },
          size_bytes: { type: "integer", minimum: 1 },
        },
      },
      JobAccepted: {
        type: "object",
        additionalProperties: false,
        required: ["id", "status"],
        properties: { id: ref("JobId"), status: { const: "queued" } },
      },
      Job: {
        type: "object",
        additionalProperties: false,
        required: ["id", "status", "kind", "template_id", "created_at", "started_at", "finished_at", "url", "expires_at", "content_type", "size_bytes", "error", "webhook", "events"],
        properties: {
          id: ref("JobId"),
          status: { enum: ["queued", "rendering", "succeeded", "failed"] },
          kind: { enum: ["render", "image"] },
          template_id: { type: ["string", "null"] },
          created_at: { type: "string", format: "date-time" },
          started_at: { type: ["string", "null"], format: "date-time" },
          finished_at: { type: ["string", "null"], format: "date-time" },
          url: { type: ["string", "null"], format: "uri", description: "Signed download URL once succeeded." },
          expires_at: { type: ["string", "null"], format: "date-time" },
          content_type: { type: ["string", "null"] },
          size_bytes: { type: ["integer", "null"], minimum: 0 },
          error: {
            oneOf: [
              { type: "null" },
              { type: "object", additionalProperties: false, required: ["code", "message"], properties: { code: { type: "string" }, message: { type: "string" } } },
            ],
          },
          webhook: {
            oneOf: [
              { type: "null" },
              {
                type: "object",
                additionalProperties: false,
                required: ["state", "attempts", "last_status", "next_attempt_at"],
                properties: {
                  state: { enum: ["none", "pending", "delivered", "exhausted"] },
                  attempts: { type: "integer", minimum: 0 },
                  last_status: { type: ["integer", "null"] },
                  next_attempt_at: { type: ["string", "null"], format: "date-time" },
                },
              },
            ],
          },
          events: {
            type: "array",
            description: "The job's events, oldest first.",
            items: {
              type: "object",
              additionalProperties: false,
              required: ["id", "type", "time", "source"],
              properties: { id: { type: "string" }, type: { type: "string", pattern: "^job\\." }, time: { type: "string", format: "date-time" }, source: { type: "string" } },
            },
          },
        },
      },
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
          { type: "object", properties: { output: { const: "pdf" } }, required: ["page"], not: { anyOf: [{ required: ["width"] }, { required: ["height"] }, { required: ["device_scale_factor"] }] } },
          { type: "object", properties: { output: { const: "png" } }, required: ["width", "height", "device_scale_factor"], not: { required: ["page"] } },
        ],
      },
      TemplateList: {
        type: "object",
        additionalProperties: false,
        required: ["templates"],
        properties: { templates: { type: "array", items: ref("Template") } },
      },
      Plan: { enum: ["demo", "free", "starter", "pro", "business"] },
      PaidPlan: { enum: ["starter", "pro", "business"] },
      Usage: {
        type: "object",
        additionalProperties: false,
        required: ["plan", "period", "renders", "rate_limit", "concurrency"],
        properties: {
          plan: ref("Plan"),
          period: {
            type: "object",
            additionalProperties: false,
            required: ["start", "end"],
            description: "The current UTC calendar month.",
            properties: { start: { type: "string", format: "date-time" }, end: { type: "string", format: "date-time" } },
          },
          renders: {
            type: "object",
            additionalProperties: false,
            required: ["used", "limit", "remaining"],
            properties: { used: { type: "integer", minimum: 0 }, limit: { type: "integer", minimum: 0 }, remaining: { type: "integer", minimum: 0 } },
          },
          rate_limit: {
            type: "object",
            additionalProperties: false,
            required: ["limit", "remaining", "reset_seconds", "window_seconds"],
            properties: {
              limit: { type: "integer", minimum: 0 },
              remaining: { type: "integer", minimum: 0 },
              reset_seconds: { type: "integer", minimum: 0 },
              window_seconds: { const: 60 },
            },
          },
          concurrency: {
            type: "object",
            additionalProperties: false,
            required: ["limit", "in_flight"],
            properties: { limit: { type: "integer", minimum: 1 }, in_flight: { type: "integer", minimum: 0 } },
          },
        },
      },
      WebhookSecret: {
        type: "object",
        additionalProperties: false,
        required: ["secret"],
        properties: { secret: { type: "string", pattern: "^whsec_[A-Za-z0-9+/_-]{43}=?$" } },
      },
      RotatedWebhookSecret: {
        type: "object",
        additionalProperties: false,
        required: ["secret", "previous_secret_expires_at"],
        properties: {
          secret: { type: "string", pattern: "^whsec_[A-Za-z0-9+/_-]{43}=?$" },
          previous_secret_expires_at: { type: "string", format: "date-time", description: "Until when the replaced secret also signs callbacks." },
        },
      },
      CheckoutRequest: {
        type: "object",
        additionalProperties: false,
        required: ["plan"],
        properties: { plan: ref("PaidPlan") },
      },
      CheckoutSession: {
        type: "object",
        additionalProperties: false,
        required: ["checkout_url", "session_id", "plan"],
        properties: { checkout_url: { type: "string", format: "uri" }, session_id: { type: "string", minLength: 1 }, plan: ref("PaidPlan") },
      },
      SignupRequest: {
        type: "object",
        additionalProperties: false,
        required: ["email"],
        properties: { email: { type: "string", format: "email", maxLength: 254 } },
      },
      SignupResponse: {
        type: "object",
        additionalProperties: false,
        required: ["api_key", "plan"],
        properties: {
          api_key: { type: "string", pattern: "^pr_live_[0-9A-Za-z]{22,}$", description: "Shown once, here. Stored only as a hash." },
          plan: { const: "free" },
        },
      },
      WebhookEvent: {
        type: "object",
        required: ["id", "type", "created_at", "job_id", "status"],
        properties: {
          id: { type: "string", description: "The same on every retry of one delivery." },
          type: { enum: ["job.succeeded", "job.failed"] },
          created_at: { type: "string", format: "date-time" },
          job_id: ref("JobId"),
          status: { enum: ["succeeded", "failed"] },
          url: { type: ["string", "null"], format: "uri", description: "Signed download URL (succeeded)." },
          expires_at: { type: ["string", "null"], format: "date-time" },
          error: {
            oneOf: [{ type: "null" }, { type: "object", required: ["code", "message"], properties: { code: { type: "string" }, message: { type: "string" } } }],
          },
        },
      },
      Health: {
        type: "object",
        additionalProperties: false,
        required: ["status"],
        properties: { status: { enum: ["ok", "ready"] } },
      },
    },
  },
} as const;

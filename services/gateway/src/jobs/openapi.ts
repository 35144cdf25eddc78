import {
  IDEMPOTENCY_DESCRIPTION,
  RATE_HEADERS,
  REPLAYABLE_HEADERS,
  errorResponse,
  header,
  internal,
  jsonResponse,
  rateLimited,
  ref,
  unauthorized,
} from "../openapi/shared";

/** The OpenAPI fragment of jobs/: POST /v1/render and /v1/image, GET /v1/jobs/{id}, their schemas and the webhook a job sends. */

const JOB_REQUEST_ERRORS = {
  "401": unauthorized,
  "404": errorResponse("The template does not exist.", ["TEMPLATE_NOT_FOUND"], RATE_HEADERS),
  "422": errorResponse(
    "The body failed validation (PAYLOAD_INVALID: wrong content type, malformed or oversized body, nesting deeper than 64 levels, unknown field, " +
      "template_id pattern, html over 524,288 bytes, bad webhook_url, data not an object or not matching the template's data_schema, " +
      "malformed Idempotency-Key; the message names the field), the document could not be rendered (RENDER_FAILED: an uncaught exception in its script, " +
      "whose first line the message gives, render timeout, output too large), or the Idempotency-Key was used with another body (IDEMPOTENCY_KEY_REUSED).",
    ["PAYLOAD_INVALID", "RENDER_FAILED", "IDEMPOTENCY_KEY_REUSED"],
    REPLAYABLE_HEADERS,
  ),
  "429": errorResponse(
    "RATE_LIMITED: too many requests this minute. QUOTA_EXCEEDED: the monthly render quota is used up. " +
      "CONCURRENCY_EXCEEDED: too many renders in flight. Checked in that order, after the key, the body and the template.",
    ["RATE_LIMITED", "QUOTA_EXCEEDED", "CONCURRENCY_EXCEEDED"],
    { ...RATE_HEADERS, "Retry-After": header("Retry-After") },
  ),
  "500": internal,
};

/** The sync 200: the JSON by default, or the document when Accept asks for it. */
function documentOrJson(documentType: string) {
  const json = jsonResponse(
    "Rendered (sync). The url is a signed, expiring download link: treat it like the document itself. " +
      `With Accept: ${documentType}, the document itself, and the headers marked "with the document".`,
    ref("RenderSucceeded"),
    REPLAYABLE_HEADERS,
  );
  const withDocument = (description: string, schema: unknown) => ({ description: `With the document: ${description}`, schema });
  return {
    ...json,
    headers: {
      ...json.headers,
      "Pressroom-Job-Id": withDocument("the job's id.", { type: "string" }),
      "Content-Location": withDocument("the signed, expiring download URL of the same document.", { type: "string", format: "uri" }),
      "Pressroom-Expires-At": withDocument("when that URL expires (RFC 3339).", { type: "string", format: "date-time" }),
      "Content-Disposition": withDocument("inline, with the document's file name.", { type: "string" }),
    },
    content: { ...json.content, [documentType]: { schema: { type: "string", format: "binary" } } },
  };
}

function jobOperation(kind: "render" | "image") {
  const isImage = kind === "image";
  const what = isImage
    ? "Renders a png template (its width and height) filled with data."
    : "Renders a pdf template, or raw HTML (a Handlebars template too), filled with data.";
  return {
    operationId: isImage ? "createImage" : "createRender",
    summary: isImage ? "Render a PNG image from a png template" : "Render a PDF from a template or raw HTML",
    description:
      `${what} ` +
      "Without webhook_url the call waits for the render (up to 60 s) and answers 200 with a signed download URL; " +
      "a job still running then is answered 202 like an async one. " +
      `A sync request whose Accept header asks for ${isImage ? "image/png" : "application/pdf"} (rather than JSON, the default) gets the document itself ` +
      "in the 200 answer, one round trip, with what the JSON would have said in headers (Pressroom-Job-Id, Content-Location: the signed URL, " +
      "Pressroom-Expires-At); the output is stored as usual, errors stay JSON, and with webhook_url the header is ignored. " +
      "With webhook_url it answers 202 at once and the result arrives by a signed callback (see webhooks). " +
      "Checks run in this order: key (401), rate limit (429 RATE_LIMITED), body (422), template exists (404), " +
      "monthly quota (429 QUOTA_EXCEEDED), concurrency (429 CONCURRENCY_EXCEEDED)." +
      IDEMPOTENCY_DESCRIPTION,
    tags: ["Rendering"],
    security: [{ bearerAuth: [] }],
    parameters: [{ $ref: "#/components/parameters/IdempotencyKey" }],
    requestBody: {
      required: true,
      content: { "application/json": { schema: ref(isImage ? "ImageRequest" : "RenderRequest") } },
    },
    responses: {
      "200": documentOrJson(isImage ? "image/png" : "application/pdf"),
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
            description:
              'Signed with the key\'s webhook secret: X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of t + "." + raw body>. ' +
              "Verify before parsing; reject when |now − t| > 300 s.",
            parameters: [
              { name: "X-Service-Signature", in: "header", required: true, schema: { type: "string", pattern: "^t=\\d+,v1=[0-9a-f]{64}(,v1=[0-9a-f]{64})*$" } },
            ],
            requestBody: { required: true, content: { "application/json": { schema: ref("WebhookEvent") } } },
            responses: { "2XX": { description: "Delivered. Any other answer (or none within the timeout) is retried with backoff." } },
          },
        },
      },
    },
  };
}

export const jobsOpenApiPaths = {
  "/v1/render": { post: jobOperation("render") },
  "/v1/image": { post: jobOperation("image") },
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
};

export const jobsOpenApiSchemas = {
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
    required: [
      "id",
      "status",
      "kind",
      "template_id",
      "created_at",
      "started_at",
      "finished_at",
      "url",
      "expires_at",
      "content_type",
      "size_bytes",
      "error",
      "webhook",
      "events",
    ],
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
          properties: {
            id: { type: "string" },
            type: { type: "string", pattern: "^job\\." },
            time: { type: "string", format: "date-time" },
            source: { type: "string" },
          },
        },
      },
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
};

export const jobsOpenApiWebhooks = {
  jobFinished: {
    post: {
      summary: "A job with webhook_url finished",
      description:
        "POSTed to the request's webhook_url. " +
        'Header X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 over t + "." + the raw body, keyed with the key\'s webhook secret>. ' +
        "Verify on the raw body before parsing JSON, compare in constant time, and reject when |now − t| > 300 s. " +
        "The event id is the same on every retry: use it to deduplicate.",
      parameters: [{ name: "X-Service-Signature", in: "header", required: true, schema: { type: "string" } }],
      requestBody: { required: true, content: { "application/json": { schema: ref("WebhookEvent") } } },
      responses: { "2XX": { description: "Delivered; anything else is retried with backoff." } },
    },
  },
};

import { z } from "@pressroom/platform";
import type { ZodOpenApiOperationObject, ZodOpenApiPathItemObject } from "zod-openapi";
import {
  IDEMPOTENCY_DESCRIPTION,
  IdempotencyKey,
  JobId,
  PreferWait,
  KEYED,
  NextCursor,
  PAGE_PARAMS,
  RATE_HEADERS,
  REPLAYABLE_HEADERS,
  TemplateId,
  dateTime,
  errorResponse,
  forbidden,
  headers,
  internal,
  jsonResponse,
  listErrors,
  rateLimited,
  unauthorized,
} from "../api-shared";
import { MAX_HTML_BYTES, MAX_JSON_DEPTH, grouped } from "../limits";
import { ImageRequest, RenderRequest, type JobKind } from "./request";
import { ScreenshotRequest } from "./screenshot";

/** The responses of jobs/ (POST /v1/render, /v1/image and /v1/screenshot, GET /v1/jobs/{id}), the webhook a job sends, and their operations. */

const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

export const RenderSucceeded = z
  .strictObject({
    id: JobId,
    status: z.literal("succeeded"),
    url: z.url().meta({ description: "Signed download URL: <base>/v1/outputs/<id>?exp=<unix seconds>&sig=<hex>." }),
    expires_at: dateTime(),
    content_type: z
      .enum(["application/pdf", "image/png", "image/jpeg", "image/webp"])
      .meta({ description: "What was made: a PDF, or an image in options.format." }),
    size_bytes: z.int().min(1),
  })
  .meta({ id: "RenderSucceeded" });

export const JobAccepted = z.strictObject({ id: JobId, status: z.literal("queued") }).meta({ id: "JobAccepted" });

const DestinationAttempt = z.strictObject({
  attempt: z.int().min(1),
  status: z.int().meta({ description: "The HTTP status the destination answered; 0 when no response came." }),
  duration_ms: z.int().min(0),
  host: z.string(),
  error: nullable(z.string()).meta({ description: "Why the attempt failed (never the URL's path or query); null when accepted." }),
  next_attempt_at: nullable(dateTime()),
});

export const Job = z
  .strictObject({
    id: JobId,
    status: z.enum(["queued", "rendering", "succeeded", "failed"]),
    kind: z.enum(["render", "image"]),
    template_id: nullable(z.string()),
    template_version: nullable(z.int().min(1)).meta({ description: "The version of the template the job renders (pinned, or current when it was admitted)." }),
    test: z
      .literal(true)
      .optional()
      .meta({ description: 'Present (true) on a test-mode job ("test": true): its output is stamped TEST and it counted against the daily test allowance.' }),
    created_at: dateTime(),
    started_at: nullable(dateTime()),
    finished_at: nullable(dateTime()),
    output_id: nullable(z.string()).meta({
      description: "The output's id once succeeded (the path segment of its URL): DELETE /v1/outputs/{id} deletes it. It stays after the output is gone.",
    }),
    url: nullable(z.url()).meta({
      description:
        "A download URL signed when this answer was made, valid until expires_at, while the output lives; null before it succeeded, and once the output expired or was deleted.",
    }),
    expires_at: nullable(dateTime()).meta({ description: "When the output (and its URL) expires; null when url is." }),
    content_type: nullable(z.string()),
    size_bytes: nullable(z.int().min(0)),
    error: nullable(z.strictObject({ code: z.string(), message: z.string() })),
    destination: nullable(
      z.strictObject({
        host: z.string().meta({ description: "The destination URL's host: its path, query and headers are never shown." }),
        state: z.enum(["pending", "delivered", "exhausted"]),
        attempts: z.int().min(0),
        last_status: nullable(z.int()).meta({ description: "The HTTP status of the last PUT; 0 when no response came (last_error says why)." }),
        last_error: nullable(z.string()),
        next_attempt_at: nullable(dateTime()),
      }),
    ).meta({ description: "The request's destination: null without one. The job stays rendering until the destination answered 2xx." }),
    webhook: nullable(
      z.strictObject({
        state: z.enum(["none", "pending", "delivered", "exhausted"]),
        attempts: z.int().min(0),
        last_status: nullable(z.int()).meta({ description: "The HTTP status of the last scheduled attempt; 0 when no response came (last_error says why)." }),
        last_error: nullable(z.string()).meta({
          description:
            "Why the last scheduled attempt failed: a TLS failure, a host name that does not resolve, a refused (private) address, a refused connection, a timeout, an HTTP status. Null once delivered.",
        }),
        next_attempt_at: nullable(dateTime()),
      }),
    ),
    events: z
      .array(
        z.strictObject({
          id: z.string(),
          type: z.string().regex(/^job\./),
          time: dateTime(),
          source: z.string(),
          script_errors: z
            .array(z.string())
            .optional()
            .meta({
              description:
                "job.succeeded of a document rendered with options.fail_on_script_error false: the first line of each uncaught exception " +
                "(or unhandled rejection) its script threw, in order (at most 20; a merged document's prefixed documents[i]).",
            }),
          destination: DestinationAttempt.optional().meta({ description: "job.destination_attempted: one PUT to the destination." }),
        }),
      )
      .meta({ description: "The job's events, oldest first." }),
  })
  .meta({ id: "Job" });

export const WebhookEvent = z
  .looseObject({
    id: z.string().meta({ description: "The same on every retry of one delivery." }),
    type: z.enum(["job.succeeded", "job.failed"]),
    created_at: dateTime(),
    job_id: JobId,
    status: z.enum(["succeeded", "failed"]),
    url: nullable(z.url()).optional().meta({ description: "Signed download URL (succeeded)." }),
    expires_at: nullable(dateTime()).optional(),
    error: nullable(z.looseObject({ code: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: "WebhookEvent" });

/** Pressroom-Job-Id: on every answer made once the request was admitted as a job (an error's too), absent on a refusal before. */
const JOB_ID = {
  "Pressroom-Job-Id": z
    .string()
    .regex(/^job_[0-9a-z]{26}$/)
    .optional()
    .meta({ description: "The job this answer is about: present on every answer made after admission (GET /v1/jobs/{id} shows its history)." }),
};

const JOB_REQUEST_ERRORS = {
  "401": unauthorized,
  "403": forbidden(),
  "404": errorResponse(
    "TEMPLATE_NOT_FOUND: the template does not exist. TEMPLATE_VERSION_NOT_FOUND: it exists but has no template_version of this number (the message names the versions it has).",
    ["TEMPLATE_NOT_FOUND", "TEMPLATE_VERSION_NOT_FOUND"],
    RATE_HEADERS,
  ),
  "422": errorResponse(
    `The body failed validation (PAYLOAD_INVALID: wrong content type, malformed or oversized body, nesting deeper than ${MAX_JSON_DEPTH} levels, unknown field, ` +
      `template_id pattern, html over ${grouped(MAX_HTML_BYTES)} bytes, html whose Handlebars does not compile (a syntax error, an unknown helper, a partial: ` +
      "the message names the field, line and column), bad webhook_url, data not an object or not matching the template's data_schema, " +
      "options that make an invalid combination with an own template's default options, which the request's override field by field, " +
      "malformed Idempotency-Key; the message names the field), the document could not be rendered (RENDER_FAILED: an uncaught exception in its script, " +
      "whose first line the message gives (unless options.fail_on_script_error is false), a sub-resource that failed to load with " +
      "options.fail_on_resource_error, which it names with its status, render timeout, output too large, a wait_for condition not met in time, which it names, " +
      "a url that could not be fetched or is not an HTML page), or the Idempotency-Key was used with another body (IDEMPOTENCY_KEY_REUSED).",
    ["PAYLOAD_INVALID", "RENDER_FAILED", "IDEMPOTENCY_KEY_REUSED"],
    { ...REPLAYABLE_HEADERS, ...JOB_ID },
  ),
  "429": errorResponse(
    'RATE_LIMITED: too many requests this minute. QUOTA_EXCEEDED: the monthly render quota is used up (with "test": true, the daily test allowance; the hint says when it resets). ' +
      "CONCURRENCY_EXCEEDED: too many renders in flight (at once, or after the wait a Prefer: wait=N header asked for). " +
      "Checked in that order, after the key, the body and the template.",
    ["RATE_LIMITED", "QUOTA_EXCEEDED", "CONCURRENCY_EXCEEDED"],
    { ...RATE_HEADERS, "Retry-After": headers.retryAfter },
  ),
  "500": errorResponse("A server-side failure (including a dependency that is briefly unavailable); safe to retry with backoff.", ["INTERNAL_ERROR"], JOB_ID),
  "502": errorResponse(
    "DESTINATION_FAILED: the document was made, but the request's destination did not accept it (a sync request whose destination gave up " +
      "within the wait: it refused the address, answered 410, or failed until its retry window ended). Not refunded; GET /v1/jobs/{id} lists every attempt.",
    ["DESTINATION_FAILED"],
    { ...REPLAYABLE_HEADERS, ...JOB_ID },
  ),
};

/** The sync 200: the JSON by default, or the document when Accept asks for it. */
function documentOrJson(documentTypes: string[]) {
  const documentType = documentTypes.join(" or ");
  const withDocument = (description: string, schema: z.ZodType) => schema.optional().meta({ description: `With the document: ${description}` });
  return jsonResponse(
    "Rendered (sync). The url is a signed, expiring download link: treat it like the document itself. " +
      `With Accept: ${documentType}, the document itself, and the headers marked "with the document".`,
    RenderSucceeded,
    {
      ...REPLAYABLE_HEADERS,
      ...JOB_ID,
      "Content-Location": withDocument("the signed, expiring download URL of the same document.", z.url()),
      "Pressroom-Expires-At": withDocument("when that URL expires (RFC 3339).", dateTime()),
      "Content-Disposition": withDocument(
        "inline with the document's file name, or attachment with options.filename (options.disposition decides when given).",
        z.string(),
      ),
    },
    Object.fromEntries(documentTypes.map((type) => [type, { schema: z.string().meta({ format: "binary" }) }])),
  );
}

const SIGNATURE = "^t=\\d+,v1=[0-9a-f]{64}(,v1=[0-9a-f]{64})*$";

/** How a callback is signed and delivered: one text for the callback of POST /v1/render and /v1/image and the document's webhooks. */
export const WEBHOOK_DELIVERY =
  'Signed with the key\'s webhook secret (whsec_…) twice: X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of t + "." + raw body, keyed with the secret>; ' +
  "and the Standard Webhooks headers (standardwebhooks.com): webhook-id (the event id), webhook-timestamp (the same t) and " +
  'webhook-signature: v1,<base64 HMAC-SHA256 of id + "." + t + "." + raw body, keyed with the base64 after whsec_, decoded>. ' +
  "For 24 h after a rotation each carries a second v1 signature, made with the replaced secret: accept the delivery when any matches. " +
  "Verify either on the raw body before parsing JSON, compare in constant time, and reject when |now − t| > 300 s. " +
  "The event id is the same on every attempt: use it to deduplicate. " +
  "A 2xx answer within 10 s delivers it. Anything else (another status, no answer, a TLS or connection failure) is retried with " +
  "exponential backoff and full jitter (the first retry within 5 s, waits growing to at most 4 h; a Retry-After is honoured) " +
  "until 24 h after the job finished, the last attempt at the window's end; 410 Gone stops the deliveries at once.";

export const webhookHeaders = z.object({
  "X-Service-Signature": z.string().regex(new RegExp(SIGNATURE)),
  "webhook-id": z.string().meta({ description: "The event id (the body's id)." }),
  "webhook-timestamp": z.string().regex(/^\d+$/).meta({ description: "Unix seconds: the t of X-Service-Signature." }),
  "webhook-signature": z
    .string()
    .regex(/^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*$/)
    .meta({ description: "Space-separated v1,<base64 signature>, one per secret in use." }),
});

/** What each job operation makes, from what. */
const JOB_OPERATIONS = {
  render: {
    operationId: "createRender",
    summary: "Render a PDF from a template, raw HTML or a public page",
    what:
      "Renders a pdf template, or raw HTML (a Handlebars template too), filled with data, or a public page (url); " +
      "options set the paper, margins, running header and footer, when the page is ready (wait_for), and what the PDF says about itself.",
    schema: RenderRequest,
  },
  image: {
    operationId: "createImage",
    summary: "Render an image (PNG, JPEG or WebP) from a png template or a public page",
    what:
      "Renders a png template (its width and height) filled with data, or a public page (url, in options.width × options.height), " +
      "as png (the default), jpeg or webp (options.format).",
    schema: ImageRequest,
  },
  screenshot: {
    operationId: "createScreenshot",
    summary: "Screenshot raw HTML or a public page as PNG, JPEG or WebP",
    what:
      "Makes an image of raw HTML (a Handlebars template filled with data, as for POST /v1/render) or of a public page (url), " +
      "in a viewport of options.width × options.height CSS pixels times options.device_scale_factor: the viewport, the whole page (full_page), " +
      "one element (selector) or a rectangle (clip), as png (the default), jpeg or webp (options.format). " +
      "It is an image job (kind image in GET /v1/jobs): one quota unit, the same limits, guards and answers as POST /v1/image.",
    schema: ScreenshotRequest,
  },
} as const;

function jobOperation(kind: JobKind): ZodOpenApiOperationObject {
  const isImage = kind !== "render";
  const { operationId, summary, what, schema } = JOB_OPERATIONS[kind];
  const { "404": templateNotFound, ...errors } = JOB_REQUEST_ERRORS;
  return {
    operationId,
    summary,
    description:
      `${what} ` +
      "Without webhook_url the call waits for the render (up to 60 s) and answers 200 with a signed download URL; " +
      "a job still running then is answered 202 like an async one. " +
      `A sync request whose Accept header asks for ${isImage ? "the type of the image made (image/png, or options.format's)" : "application/pdf"} (rather than JSON, the default) gets the document itself ` +
      "in the 200 answer, one round trip, with what the JSON would have said in headers (Pressroom-Job-Id, Content-Location: the signed URL, " +
      "Pressroom-Expires-At); the output is stored as usual, errors stay JSON, and with webhook_url the header is ignored. " +
      'With webhook_url it answers 202 at once and the result arrives by a signed callback (see webhooks); with "async": true it answers 202 at once ' +
      "(the job's id, Location: /v1/jobs/{id}) and the job is polled there, no webhook needed. " +
      "With a destination, the output is also PUT to it and the job succeeds only once the destination answered 2xx: a sync request " +
      "answers 200 after that, 502 DESTINATION_FAILED when the destination was given up within the wait, and 202 while it is still being retried. " +
      `Checks run in this order: key (401), rate limit (429 RATE_LIMITED), body (422), ${kind === "screenshot" ? "" : "template exists (404), "}` +
      "monthly quota (429 QUOTA_EXCEEDED), concurrency (429 CONCURRENCY_EXCEEDED)." +
      IDEMPOTENCY_DESCRIPTION,
    tags: ["Rendering"],
    security: KEYED,
    parameters: [IdempotencyKey, PreferWait],
    requestBody: { required: true, content: { "application/json": { schema } } },
    responses: {
      "200": documentOrJson(isImage ? ["image/png", "image/jpeg", "image/webp"] : ["application/pdf"]),
      "202": jsonResponse(
        "Accepted: the job runs in the background (webhook_url, async, or a sync wait that ran out). Poll Location, or wait for the webhook.",
        JobAccepted,
        {
          ...REPLAYABLE_HEADERS,
          Location: headers.location,
          ...JOB_ID,
        },
      ),
      ...errors,
      ...(kind === "screenshot" ? {} : { "404": templateNotFound }),
    },
    callbacks: {
      jobFinished: {
        "{$request.body#/webhook_url}": {
          post: {
            summary: "The job finished (only when webhook_url was given)",
            description: WEBHOOK_DELIVERY,
            requestParams: { header: webhookHeaders },
            requestBody: { required: true, content: { "application/json": { schema: WebhookEvent } } },
            responses: {
              "2XX": { description: "Delivered, when it arrives within 10 s. Any other answer (or none within 10 s) is retried for 24 h." },
              "410": { description: "Gone: no more attempts for this job." },
            },
          },
        },
      },
    },
  };
}

export const renderOperation = jobOperation("render");
export const imageOperation = jobOperation("image");
export const screenshotOperation = jobOperation("screenshot");

export const jobViewOperation: ZodOpenApiOperationObject = {
  operationId: "getJob",
  summary: "One of the calling key's jobs, with its event history",
  tags: ["Rendering"],
  security: KEYED,
  requestParams: { path: z.object({ id: z.string().meta({ description: "The id returned by POST /v1/render or /v1/image." }) }) },
  responses: {
    "200": jsonResponse("The job.", Job, RATE_HEADERS),
    "401": unauthorized,
    "404": errorResponse("No job with this id belongs to the calling key.", ["NOT_FOUND"], RATE_HEADERS),
    "429": rateLimited,
    "500": internal,
  },
};

/** The webhook a job with webhook_url sends when it ends. */
export const jobWebhooks: Record<string, ZodOpenApiPathItemObject> = {
  jobFinished: {
    post: {
      summary: "A job with webhook_url finished",
      description: `POSTed to the request's webhook_url. ${WEBHOOK_DELIVERY}`,
      requestParams: { header: webhookHeaders },
      requestBody: { required: true, content: { "application/json": { schema: WebhookEvent } } },
      responses: {
        "2XX": { description: "Delivered, when it arrives within 10 s. Any other answer (or none within 10 s) is retried for 24 h." },
        "410": { description: "Gone: no more attempts for this job." },
      },
    },
  },
};

export const JobListQuery = z.object({
  status: z.enum(["queued", "rendering", "succeeded", "failed"]).optional(),
  kind: z.enum(["render", "image"]).optional(),
  template_id: TemplateId.optional(),
  ...PAGE_PARAMS,
});

export const JobList = z.strictObject({ data: z.array(Job).meta({ description: "Newest first." }), next_cursor: NextCursor }).meta({ id: "JobList" });

export const jobListOperation: ZodOpenApiOperationObject = {
  operationId: "listJobs",
  summary: "The calling key's jobs, newest first",
  description:
    "Each job as GET /v1/jobs/{id} answers it, with its event history, newest first, filtered by status, kind and template and paged with a cursor. " +
    "Listed from a read model of the job events (the events stay the truth): a job appears within moments of its acceptance, " +
    "and the list is rebuilt from the events if it is ever lost. Jobs are kept 90 days.",
  tags: ["Rendering"],
  security: KEYED,
  requestParams: { query: JobListQuery },
  responses: {
    "200": jsonResponse("A page of jobs.", JobList, RATE_HEADERS),
    ...listErrors,
  },
};

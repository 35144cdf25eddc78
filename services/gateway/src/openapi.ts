import { Batch, BatchArchive, BatchCompletedEvent, BatchId, BatchItem, BatchItemList, BatchItemRequest, BatchRequest, batchWebhooks } from "./jobs/batch-api";
import { DEMO_API_KEY, PLANS, PLAN_ORDER } from "@pressroom/domain";
import { createDocument, type ZodOpenApiPathsObject, type oas31 } from "zod-openapi";
import { ErrorBody, JobId, TemplateId, errorResponse, headers } from "./api-shared";
import { CheckoutRequest, CheckoutSession, PaidPlan } from "./billing/api";
import { Job, JobAccepted, JobList, RenderSucceeded, WebhookEvent, jobWebhooks } from "./jobs/api";
import { Encryption, ImageOptions, Margin, PageUrl, PartOptions, PdfMetadata, RenderOptions, Watermark } from "./jobs/options";
import { WaitFor } from "./jobs/wait-for";
import { DocumentPart, ImageRequest, RenderRequest, WebhookUrl } from "./jobs/request";
import { UrlCookie, UrlOptions } from "./jobs/url-options";
import { Destination } from "./jobs/destination";
import { DailyUsage, Plan, RotatedKey, RotatedWebhookSecret, SignupRequest, SignupResponse, Usage, WebhookSecret } from "./keys/api";
import { grouped } from "./limits";
import { Health } from "./meta/api";
import type { ApiRoute } from "./route";
import { PageSettings, Template, TemplateList, TemplateVersions } from "./templates/api";
import { PageInput, TemplateInput, TemplateReplacement } from "./templates/request";
import { Clip, ScreenshotOptions, ScreenshotRequest } from "./jobs/screenshot";
import { Delivery, DeliveryId, DeliveryList } from "./webhooks/api";
import { Session, SessionRequest } from "./console/api";

/**
 * The OpenAPI 3.1 document of the public API, served at GET /v1/openapi.json:
 * generated (zod-openapi) from the route table's operations, whose zod
 * schemas are the ones the handlers validate requests with. Paths come in the
 * route table's order; this file adds what no route owns (the info, the tags,
 * the security scheme, the responses of unknown paths and methods) and the
 * order of the schemas, which GET /docs shows them in.
 */

const demo = PLANS.demo;
const planRows = PLAN_ORDER.map((id) => {
  const plan = PLANS[id];
  const name = plan.priceUsd > 0 ? `${id} (${plan.priceUsd} USD)` : id;
  return `| ${name} | ${grouped(plan.rendersPerMonth)} | ${grouped(plan.requestsPerMinute)} | ${plan.concurrentRenders} | ${grouped(plan.templates)} |`;
});

const DESCRIPTION = [
  "Send a template id (or raw HTML) and a JSON data object; get back a PDF (POST /v1/render) or a PNG (POST /v1/image); " +
    "or an image of raw HTML or a public page (POST /v1/screenshot), " +
    "behind an expiring signed download URL, at once or by a signed webhook.",
  "",
  "**Authentication.** Keyed operations take `Authorization: Bearer <API_KEY>` (or the console's session cookie; see POST /console/session). " +
    `The public demo key \`${DEMO_API_KEY}\` has the demo plan (${demo.rendersPerMonth} renders a month, ${demo.requestsPerMinute} requests a minute, ` +
    `${demo.concurrentRenders} render at a time). ` +
    "Get your own with POST /v1/signup.",
  "",
  "**Limits.** Every keyed request counts toward the plan's requests per minute (at most N in any 60 s) " +
    "and carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset. " +
    "An accepted render or image counts toward the monthly quota (UTC calendar month); a render that fails through the service's own fault is refunded. " +
    "Every 429 carries Retry-After (seconds).",
  "",
  ["| plan | renders / month | requests / minute | concurrent renders | stored templates |", "|---|---|---|---|---|", ...planRows].join("\n"),
  "",
  "**Your own templates.** POST /v1/templates stores a template private to your key (another key gets 404 for it, as for an id that does not exist), " +
    "versioned by PUT, rendered once with its sample_data when saved (not charged), with its own assets (fonts, images, stylesheets) at assets/<name>. " +
    "Render it by template_id like a catalog template; template_version pins a version.",
  "",
  "**Errors.** Every error response, on every path, is `application/json` with exactly three fields: " +
    "`error` (a message for people), `code` (branch on this) and `hint` (what to do). " +
    "An unknown path answers 404 NOT_FOUND; a known path with another method answers 405 METHOD_NOT_ALLOWED with an Allow header; " +
    "a request the HTTP parser cannot read answers 422 PAYLOAD_INVALID.",
  "",
  "Every response carries Request-Id (the trace id of the request); quote it to support.",
].join("\n");

/** The schemas in the order GET /docs shows them: the order they were added to the API. */
const SCHEMAS = {
  Error: ErrorBody,
  TemplateId,
  JobId,
  WebhookUrl,
  RenderRequest,
  ImageRequest,
  RenderSucceeded,
  JobAccepted,
  Job,
  PageSettings,
  Template,
  TemplateList,
  TemplateInput,
  TemplateReplacement,
  PageInput,
  TemplateVersions,
  Plan,
  PaidPlan,
  Usage,
  WebhookSecret,
  RotatedWebhookSecret,
  CheckoutRequest,
  CheckoutSession,
  SignupRequest,
  SignupResponse,
  WebhookEvent,
  Health,
  PageUrl,
  RenderOptions,
  PartOptions,
  ImageOptions,
  WaitFor,
  Margin,
  PdfMetadata,
  Watermark,
  Encryption,
  DocumentPart,
  JobList,
  DailyUsage,
  DeliveryId,
  Delivery,
  DeliveryList,
  SessionRequest,
  Session,
  RotatedKey,
  BatchId,
  BatchItemRequest,
  BatchRequest,
  Batch,
  BatchItem,
  BatchItemList,
  ScreenshotRequest,
  ScreenshotOptions,
  Clip,
  UrlOptions,
  UrlCookie,
  Destination,
  BatchArchive,
  BatchCompletedEvent,
};

function paths(routes: readonly ApiRoute[]): ZodOpenApiPathsObject {
  const result: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    result[path] = { ...result[path], [route.method.toLowerCase()]: route.operation };
  }
  return result;
}

/** OpenAPI 3.1's info (zod-openapi's type has no summary). */
const INFO = { title: "Pressroom API", version: "1.0.0", summary: "Render documents (PDF) and images (PNG) from templates or HTML.", description: DESCRIPTION };

export function openApiDocument(routes: readonly ApiRoute[]): oas31.OpenAPIObject {
  const document = createDocument({
    openapi: "3.1.0",
    info: INFO,
    servers: [{ url: "http://localhost:8080", description: "Local (./scripts/up.sh)" }],
    tags: [
      { name: "Rendering", description: "Documents and images, sync or async." },
      { name: "Batches", description: "Many render and image jobs with one request: admitted together, run within the key's concurrency." },
      { name: "Templates", description: "The public template catalog, and each account's own templates." },
      { name: "Account", description: "Keys, usage, webhook secret, billing." },
      { name: "Outputs", description: "Signed download URLs of rendered outputs." },
      { name: "Meta", description: "This document and the process's health." },
      { name: "Webhooks", description: "The deliveries of your jobs' webhook callbacks, and their replay." },
      { name: "Console", description: "The console's session: an API key exchanged for an HttpOnly cookie (pages at /console)." },
    ],
    security: [],
    paths: paths(routes),
    webhooks: { ...jobWebhooks, ...batchWebhooks },
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "pr_live_<base62>",
          description:
            "Authorization: Bearer <API_KEY>. A missing, malformed, unknown or revoked key is 401 AUTH_INVALID; a revocation takes effect within seconds.",
        },
        cookieAuth: {
          type: "apiKey",
          in: "cookie",
          name: "pressroom_session",
          description:
            "The console's session (POST /console/session): the same operations as a bearer key. A request with it that changes anything " +
            "must carry the session's X-CSRF-Token (GET /console/session) and come from the same origin, else 403 CSRF_REJECTED. " +
            "An expired, signed-out or revoked session is 401 AUTH_INVALID.",
        },
      },
      responses: {
        NotFound: errorResponse("No such route (any unknown path).", ["NOT_FOUND"]),
        MethodNotAllowed: errorResponse("The path exists but not with this method.", ["METHOD_NOT_ALLOWED"], { Allow: headers.allow }),
        MalformedRequest: errorResponse("The HTTP parser could not read the request.", ["PAYLOAD_INVALID"]),
      },
      schemas: SCHEMAS,
    },
  });
  // zod-openapi writes the request schemas first; GET /docs shows them in SCHEMAS' order.
  const schemas = document.components?.schemas ?? {};
  return { ...document, components: { ...document.components, schemas: Object.fromEntries(Object.keys(SCHEMAS).map((name) => [name, schemas[name]!])) } };
}

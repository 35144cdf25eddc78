import { z } from "@pressroom/platform";
import type { ZodOpenApiOperationObject } from "zod-openapi";
import { MAX_BATCH_BODY_BYTES, grouped } from "../limits";
import {
  IDEMPOTENCY_DESCRIPTION,
  IdempotencyKey,
  JobId,
  KEYED,
  NextCursor,
  PAGE_PARAMS,
  RATE_HEADERS,
  REPLAYABLE_HEADERS,
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
import { WEBHOOK_DELIVERY, webhookHeaders } from "./api";
import { WebhookUrl } from "./request";

/** POST /v1/batches, GET /v1/batches/{id}, its items and DELETE (issue 42): the pinned shapes. */

export const MAX_BATCH_ITEMS = 1000;

export const BatchId = z
  .string()
  .regex(/^bat_[0-9a-z]{26}$/)
  .meta({ id: "BatchId" });

export const BatchItemRequest = z
  .looseObject({
    kind: z.enum(["render", "image"]).optional().meta({ description: "render (the default): a RenderRequest; image: an ImageRequest." }),
  })
  .meta({
    id: "BatchItemRequest",
    description:
      "The body of POST /v1/render (kind render, the default) or POST /v1/image (kind image), with kind, validated as that operation validates it; " +
      "an item's own webhook_url is refused (a batch's items call nobody back: poll the batch, its items or their jobs).",
  });

export const BatchRequest = z
  .strictObject({
    items: z
      .array(BatchItemRequest, { error: "must be an array of render or image requests" })
      .min(1, "must have at least one item")
      .max(MAX_BATCH_ITEMS, `must have at most ${MAX_BATCH_ITEMS} items`),
    webhook_url: WebhookUrl.optional().meta({
      description: "Called back once (batch.completed, signed as job callbacks are) when every item has ended, after the archive is ready.",
    }),
    archive: z
      .boolean()
      .optional()
      .meta({
        description:
          "true: when the batch ends, a zip of the succeeded items' outputs is made, each named by its options.filename or its index " +
          '(made unique with a " (2)" suffix), behind a signed, expiring URL: the batch\'s archive.',
      }),
  })
  .meta({ id: "BatchRequest" });

export const BatchArchive = z
  .strictObject({
    url: z.url().meta({ description: "Signed download URL of the zip (Range requests answered)." }),
    expires_at: dateTime().meta({ description: "When the URL, and the zip, expire." }),
    size_bytes: z.int().min(0),
  })
  .meta({ id: "BatchArchive" });

const Counts = z.strictObject({ queued: z.int().min(0), running: z.int().min(0), succeeded: z.int().min(0), failed: z.int().min(0) });

export const Batch = z
  .strictObject({
    id: BatchId,
    status: z.enum(["accepted", "running", "completed", "cancelled"]),
    total: z.int().min(1).max(MAX_BATCH_ITEMS),
    counts: Counts.meta({
      description:
        "queued: waiting for one of the key's concurrency slots; running: holding one (in the render queue or rendering); " +
        "succeeded; failed (a cancelled item included).",
    }),
    created_at: dateTime(),
    archive: BatchArchive.nullable().meta({ description: "The zip of the succeeded items' outputs (archive: true), null until it is ready." }),
  })
  .meta({ id: "Batch" });

export const BatchCompletedEvent = z
  .strictObject({
    id: z.string().meta({ description: "The event id: the same on every attempt; deduplicate on it." }),
    type: z.literal("batch.completed"),
    created_at: dateTime().meta({ description: "When the batch ended (its last item, or its cancellation)." }),
    batch: Batch,
  })
  .meta({ id: "BatchCompletedEvent", description: "The body of a batch's callback, exactly these fields in this order." });

const BATCH_CALLBACK_RESPONSES = {
  "2XX": { description: "Delivered, when it arrives within 10 s. Any other answer (or none within 10 s) is retried for 24 h." },
  "410": { description: "Gone: no more attempts for this batch." },
};

const batchCompletedPost = (summary: string, description: string) => ({
  post: {
    summary,
    description,
    requestParams: { header: webhookHeaders },
    requestBody: { required: true, content: { "application/json": { schema: BatchCompletedEvent } } },
    responses: BATCH_CALLBACK_RESPONSES,
  },
});

const BATCH_DELIVERY = `Sent once per batch, when every item has ended (and its archive is ready), retried as a job's callback, counting from the batch's end. ${WEBHOOK_DELIVERY}`;

/** The webhook a batch with webhook_url sends when it ends. */
export const batchWebhooks = { batchCompleted: batchCompletedPost("A batch with webhook_url ended", `POSTed to the batch's webhook_url. ${BATCH_DELIVERY}`) };

export const BatchItem = z
  .strictObject({
    index: z.int().min(0),
    job_id: JobId,
    status: z.enum(["queued", "running", "succeeded", "failed"]),
    url: z.url().optional().meta({
      description: "A download URL of a succeeded item, signed when this answer was made, while its output lives (absent once it expired or was deleted).",
    }),
    error: z
      .strictObject({ code: z.string(), message: z.string() })
      .optional()
      .meta({ description: "Why a failed item failed (CANCELLED: cancelled before it started)." }),
  })
  .meta({ id: "BatchItem" });

export const BatchItemsQuery = z.object(PAGE_PARAMS);

export const BatchItemList = z
  .strictObject({ data: z.array(BatchItem).meta({ description: "In item order." }), next_cursor: NextCursor })
  .meta({ id: "BatchItemList" });

const BatchPath = { path: z.object({ id: z.string().meta({ description: "The id returned by POST /v1/batches." }) }) };
const notFound = errorResponse("No batch with this id belongs to the calling key.", ["NOT_FOUND"], RATE_HEADERS);

export const createBatchOperation: ZodOpenApiOperationObject = {
  operationId: "createBatch",
  summary: "Render many documents with one request",
  description:
    `1 to ${MAX_BATCH_ITEMS} render or image requests, each an ordinary job (GET /v1/jobs/{id}, its events, its refund rules). ` +
    "The batch counts as one request against the rate limit and takes one quota unit per item, all or none: a batch over the month's quota is " +
    "429 QUOTA_EXCEEDED and nothing runs. Its items run within the key's concurrency limit, waiting their turn (never refused for it), oldest batch first; " +
    "while they hold the key's slots, the key's own renders may be refused CONCURRENCY_EXCEEDED, and other keys' jobs never wait behind more than " +
    "the key's concurrency of its items. An invalid item refuses the whole batch with 422, the message naming items[i].<field>. " +
    `The body is at most ${grouped(MAX_BATCH_BODY_BYTES)} bytes.` +
    IDEMPOTENCY_DESCRIPTION,
  tags: ["Batches"],
  security: KEYED,
  parameters: [IdempotencyKey],
  requestBody: { required: true, content: { "application/json": { schema: BatchRequest } } },
  responses: {
    "202": jsonResponse("Accepted (status accepted): the items run in the background. Poll Location.", Batch, {
      ...REPLAYABLE_HEADERS,
      Location: z
        .string()
        .regex(/^\/v1\/batches\/bat_[0-9a-z]{26}$/)
        .meta({ description: "The batch's resource, /v1/batches/<id>." }),
    }),
    "401": unauthorized,
    "403": forbidden(),
    "422": errorResponse(
      "The body or an item failed validation (PAYLOAD_INVALID, naming items[i].<field>; an item's template that does not exist too), " +
        "or the Idempotency-Key was used with another body (IDEMPOTENCY_KEY_REUSED).",
      ["PAYLOAD_INVALID", "IDEMPOTENCY_KEY_REUSED"],
      REPLAYABLE_HEADERS,
    ),
    "429": errorResponse(
      "RATE_LIMITED: too many requests this minute. QUOTA_EXCEEDED: fewer quota units left this month than the batch has items.",
      ["RATE_LIMITED", "QUOTA_EXCEEDED"],
      { ...RATE_HEADERS, "Retry-After": headers.retryAfter },
    ),
    "500": internal,
  },
  callbacks: {
    batchCompleted: {
      "{$request.body#/webhook_url}": batchCompletedPost("The batch ended (only when webhook_url was given)", BATCH_DELIVERY),
    },
  },
};

export const getBatchOperation: ZodOpenApiOperationObject = {
  operationId: "getBatch",
  summary: "One of the calling key's batches, with live counts",
  tags: ["Batches"],
  security: KEYED,
  requestParams: BatchPath,
  responses: { "200": jsonResponse("The batch.", Batch, RATE_HEADERS), "401": unauthorized, "404": notFound, "429": rateLimited, "500": internal },
};

export const batchItemsOperation: ZodOpenApiOperationObject = {
  operationId: "listBatchItems",
  summary: "A batch's items in item order",
  tags: ["Batches"],
  security: KEYED,
  requestParams: { ...BatchPath, query: BatchItemsQuery },
  responses: { "200": jsonResponse("A page of items.", BatchItemList, RATE_HEADERS), ...listErrors, "404": notFound },
};

export const cancelBatchOperation: ZodOpenApiOperationObject = {
  operationId: "cancelBatch",
  summary: "Cancel what has not started",
  description:
    "Every item still queued is cancelled at once and its quota unit refunded; its job ends failed with CANCELLED. Items already running finish. " +
    "Cancelling again changes nothing.",
  tags: ["Batches"],
  security: KEYED,
  requestParams: BatchPath,
  responses: {
    "200": jsonResponse("The batch, cancelled.", Batch, RATE_HEADERS),
    "401": unauthorized,
    "403": forbidden(),
    "404": notFound,
    "429": rateLimited,
    "500": internal,
  },
};

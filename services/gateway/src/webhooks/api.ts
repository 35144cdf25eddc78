import { z } from "@pressroom/platform";
import type { ZodOpenApiOperationObject } from "zod-openapi";
import { JobId, KEYED, NextCursor, PAGE_PARAMS, RATE_HEADERS, dateTime, errorResponse, forbidden, jsonResponse, keyedErrors, listErrors } from "../api-shared";

/** The schemas of webhooks/ (a key's callback deliveries and their replay) and their operations. */

export const DeliveryId = z
  .string()
  .regex(/^dlv_[0-9a-z]{26}$/)
  .meta({ id: "DeliveryId" });

export const Delivery = z
  .strictObject({
    id: DeliveryId,
    event_id: z.string().meta({ description: "The callback's id (the body's id): the same on every attempt and replay of one job's callback." }),
    event_type: z.enum(["job.succeeded", "job.failed"]),
    job_id: JobId,
    attempt: z.int().min(1).meta({ description: "Attempts of one callback are numbered in order, replays included." }),
    status: z
      .enum(["pending", "succeeded", "failed"])
      .meta({ description: "pending: not attempted yet; succeeded: a 2xx answer; failed: any other, or none." }),
    response_status: z.int().min(100).max(599).nullable().meta({ description: "The receiver's HTTP status; null when none came (or not yet attempted)." }),
    duration_ms: z.int().min(0).nullable().meta({ description: "From the request's start to the response's headers (or the failure); null when pending." }),
    created_at: dateTime().meta({ description: "When the attempt was due: the job's end for the first, the attempt for a retry, the request for a replay." }),
    next_retry_at: dateTime().nullable().meta({ description: "When the callback is tried again after this failed attempt; null when no retry follows." }),
  })
  .meta({
    id: "Delivery",
    description: "One attempt (or a pending one) of a job's webhook callback. The webhook URL is never shown: its path or query may carry your token.",
  });

export const DeliveryList = z
  .strictObject({ data: z.array(Delivery).meta({ description: "Newest first." }), next_cursor: NextCursor })
  .meta({ id: "DeliveryList" });

export const DeliveryListQuery = z.object({ job_id: JobId.optional().meta({ description: "Only this job's deliveries." }), ...PAGE_PARAMS });

export const deliveriesOperation: ZodOpenApiOperationObject = {
  operationId: "listWebhookDeliveries",
  summary: "The calling key's webhook deliveries, newest first",
  description:
    "One entry per attempt of each callback (and a pending entry for an attempt not made yet), with the receiver's status, " +
    "the time it took and the next retry. Listed from a read model of the job events, rebuilt from them if it is ever lost.",
  tags: ["Webhooks"],
  security: KEYED,
  requestParams: { query: DeliveryListQuery },
  responses: {
    "200": jsonResponse("A page of deliveries.", DeliveryList, RATE_HEADERS),
    ...listErrors,
  },
};

export const replayOperation: ZodOpenApiOperationObject = {
  operationId: "replayWebhookDelivery",
  summary: "Send a delivery's callback again",
  description:
    "The same callback (the same event id and body) is sent once more to the job's webhook_url, signed afresh with the key's current secret " +
    "(and the previous one during a rotation), as a new attempt: one attempt, not retried; replay again if it fails. " +
    "Answers the new delivery, pending; GET /v1/webhooks/deliveries shows its outcome. No request body.",
  tags: ["Webhooks"],
  security: KEYED,
  requestParams: { path: z.object({ id: z.string().meta({ description: "A delivery's id from GET /v1/webhooks/deliveries." }) }) },
  responses: {
    "202": jsonResponse("The new delivery, not attempted yet.", Delivery, RATE_HEADERS),
    "403": forbidden(),
    "404": errorResponse("No delivery with this id belongs to the calling key (another key's is answered the same way).", ["NOT_FOUND"], RATE_HEADERS),
    ...keyedErrors,
  },
};

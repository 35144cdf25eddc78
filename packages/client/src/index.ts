export { Pressroom, PressroomClient, type PressroomOptions, type RequestOptions, type SignupOptions } from "./client";
export { PressroomError, PressroomSignatureError, type PressroomErrorCode, type PressroomErrorInit } from "./errors";
export { DEFAULT_BASE_URL, DEFAULT_TIMEOUT_MS, type FetchLike } from "./http";
export {
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  constructEvent,
  signWebhookPayload,
  verifyWebhookSignature,
  type RawBody,
  type VerifyOptions,
  type WebhookEvent,
} from "./webhooks";
export type * from "./types";
export type { DailyUsage, DailyUsageQuery, Delivery, DeliveryList, DeliveryListQuery, JobList, JobListQuery } from "./lists";
export type { Batch, BatchCounts, BatchItem, BatchItemList, BatchItemRequest, BatchItemsQuery, BatchRequest } from "./batches";

export { Pressroom, PressroomClient } from "./client";
export type { PressroomOptions, RequestOptions, SignupOptions, WaitOptions } from "./options";
export { PressroomError, PressroomSignatureError, type PressroomErrorCode, type PressroomErrorInit } from "./errors";
export { BASE_URL_VARIABLE, DEFAULT_BASE_URL, DEFAULT_MAX_RETRY_WAIT_MS, DEFAULT_TIMEOUT_MS, type FetchLike } from "./http";
export {
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  constructEvent,
  signWebhookPayload,
  verifyStandardWebhook,
  verifyWebhookSignature,
  type RawBody,
  type VerifyOptions,
  type WebhookEvent,
  type WebhookHeaders,
} from "./webhooks";
export type * from "./types";
export type * from "./templates";
export type { DailyUsage, DailyUsageQuery, Delivery, DeliveryList, DeliveryListQuery, JobList, JobListQuery } from "./lists";
export type {
  Batch,
  BatchArchive,
  BatchCompletedEvent,
  BatchCounts,
  BatchItem,
  BatchItemList,
  BatchItemRequest,
  BatchItemsQuery,
  BatchRequest,
} from "./batches";

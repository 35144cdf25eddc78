// What Pressroom knows about its documents, built on the platform kit (which knows nothing of them).
export { type AccountEvent, publishAccountEvent } from "./accounts";
export {
  type AnnouncedOutput,
  appendJobEvent,
  foldJob,
  isAuthentic,
  isTerminal,
  JOB_SPAN_SUBJECT,
  jobEvent,
  type JobEvent,
  jobEventSpec,
  type JobEventType,
  type JobOutcome,
  type JobState,
  type JobStatus,
  loadJob,
  nextReplayAttempt,
  nextScheduledAttempt,
  readFirstJobEvent,
  readJobEvents,
  readLastJobEvent,
  retainedAcceptance,
  storedJobEvent,
  type StoredJobEvent,
  type WebhookReplay,
} from "./jobs";
export {
  destinationPurpose,
  jobSecretsPurpose,
  openDestination,
  openJobSecrets,
  sealJobSecrets,
  type DestinationSecrets,
  type SealingRecipients,
} from "./job-secrets";
export { announcedOutcome, announceOutcome, outcomeInboxOf } from "./outcomes";
export {
  destinationHeadersProblem,
  type DestinationState,
  destinationUrlProblem,
  MAX_DESTINATION_HEADER_VALUE_LENGTH,
  MAX_DESTINATION_HEADERS,
  MAX_DESTINATION_URL_LENGTH,
  RESERVED_DESTINATION_HEADERS,
} from "./destinations";
export { DEMO_API_KEY, DEMO_KEY_ID, isPlanId, MIN_OUTPUT_TTL_SECONDS, PAID_PLANS, type Plan, PLAN_ORDER, type PlanId, planOf, PLANS } from "./plans";
export { type RecentOutput, type RecentOutputInfo, RecentOutputs, type RecentOutputsOptions } from "./recent-outputs";
export { type OutputTarget, storeOutput } from "./store-output";
export { TEMPLATE_ID_PATTERN, templateNotFound, templateVersionNotFound } from "./templates";
export { MAX_WEBHOOK_URL_LENGTH, outboundUrlProblem, webhookUrlProblem } from "./webhook-url";
export { CSS_UNITS_PER_INCH, MAX_PAPER_IN, MIN_PAPER_IN, MIN_PRINTABLE_IN, PAPER_FORMATS, PAPER_INCHES, paperFormatName, previewPixels } from "./paper";
export {
  camelKeys,
  type CamelKeys,
  type Clip,
  DEFAULT_IMAGE_QUALITY,
  DEFAULT_MARGIN,
  DEFAULT_URL_VIEWPORT,
  DISPOSITIONS,
  type Disposition,
  downloadName,
  type EncryptPermissions,
  type Encryption,
  IMAGE_FORMATS,
  type ImageFormat,
  type KeysOutside,
  type Margin,
  type NoKeys,
  MAX_FILENAME_LENGTH,
  MAX_IMAGE_SIDE,
  MEDIA_TYPES,
  type MediaType,
  optionsOfContract,
  optionsToContract,
  PDFA_LEVELS,
  type PdfaLevel,
  pdfaPart,
  type PdfMetadata,
  type RenderOptions,
  safeFilename,
  type WaitFor,
  WATERMARK_DEFAULTS,
  type Watermark,
} from "./options";
export { BatchArchive, BatchArchived, batchCallbackId, BatchCompleted, BatchEnded, BatchObject, decodeBatchEvent, publishBatchEvent } from "./batch-events";
export { appendOutcome, decodeWebhookDelivery, encodeWebhookDelivery, type WebhookDelivery } from "./webhook-delivery";

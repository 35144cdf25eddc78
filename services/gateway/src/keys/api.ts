import { z } from "@pressroom/platform";
import { PLAN_ORDER, type PlanId } from "@pressroom/domain";
import type { ZodOpenApiOperationObject, ZodOpenApiResponsesObject } from "zod-openapi";
import { KEYED, RATE_HEADERS, dateTime, errorResponse, forbidden, headers, internal, jsonResponse, keyedErrors } from "../api-shared";

/** The schemas of keys/ (usage, the webhook secret and its rotation, signup) and their operations. */

export const Plan = z.enum(PLAN_ORDER as [PlanId, ...PlanId[]]).meta({ id: "Plan" });
const count = () => z.int().min(0);

export const Usage = z
  .strictObject({
    plan: Plan,
    period: z.strictObject({ start: dateTime(), end: dateTime() }).meta({ description: "The current UTC calendar month." }),
    renders: z.strictObject({ used: count(), limit: count(), remaining: count() }),
    previews: z.strictObject({ used: count(), limit: count(), remaining: count() }).meta({
      description:
        "Template previews rendered this month (a save's, a preview.png not yet stored; a stored preview counts nothing): " +
        "each holds a concurrency slot while it renders and counts here, three times the plan's renders, none for the demo key.",
    }),
    test: z.strictObject({ used: count(), limit: count(), remaining: count() }).meta({
      description:
        'Test-mode renders and images ("test": true, stamped TEST) made this UTC day, against the plan\'s daily allowance (demo 10, free 20, ' +
        "starter 50, pro 200, business 1,000), which starts again at 00:00 UTC; they never count against renders.",
    }),
    rate_limit: z.strictObject({ limit: count(), remaining: count(), reset_seconds: count(), window_seconds: z.literal(60) }),
    concurrency: z.strictObject({ limit: z.int().min(1), in_flight: count() }),
  })
  .meta({ id: "Usage" });

const isoDate = () => z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date, YYYY-MM-DD");

export const DailyUsageQuery = z.object({
  from: isoDate().optional().meta({ description: "The first day (UTC), default the first day of the current period." }),
  to: isoDate().optional().meta({ description: "The last day (UTC), included; default today." }),
});

export const DailyUsage = z
  .strictObject({
    data: z
      .array(
        z.strictObject({
          date: z.string().meta({ format: "date" }),
          succeeded: count(),
          failed: count(),
          refunded: count().meta({ description: "Of the failed, those that failed through the service's fault: their quota units were given back." }),
        }),
      )
      .meta({ description: "Every day of the range, in order (days without jobs too)." }),
  })
  .meta({ id: "DailyUsage", description: "The calling key's jobs by the UTC day they ended, by outcome." });

const secret = () => z.string().regex(/^whsec_[A-Za-z0-9+/_-]{43}=?$/);
export const WebhookSecret = z.strictObject({ secret: secret() }).meta({ id: "WebhookSecret" });
export const RotatedWebhookSecret = z
  .strictObject({
    secret: secret(),
    previous_secret_expires_at: dateTime().meta({ description: "Until when the replaced secret also signs callbacks." }),
  })
  .meta({ id: "RotatedWebhookSecret" });

export const RotatedKey = z
  .strictObject({
    api_key: z
      .string()
      .regex(/^pr_live_[0-9A-Za-z]{22,}$/)
      .meta({ description: "The key's new value, working at once. Shown once, here; stored only as a hash." }),
    previous_key_expires_at: dateTime().meta({
      description: "Until when the replaced key still works (24 hours after the rotation); after it, it is refused (401 AUTH_INVALID).",
    }),
  })
  .meta({ id: "RotatedKey" });

/** The gateway checks only that email is a string; identity checks the address (format, length) and answers its own 422. */
export const SignupRequest = z
  .strictObject({ email: z.string({ error: "required, a string" }).meta({ format: "email", maxLength: 254 }) })
  .meta({ id: "SignupRequest" });
export const SIGNUP_HINTS = { email: { required: 'Send {"email": "you@example.com"}.', invalid: 'Send {"email": "you@example.com"}.' } };

export const SignupResponse = z
  .strictObject({
    api_key: z
      .string()
      .regex(/^pr_live_[0-9A-Za-z]{22,}$/)
      .meta({ description: "Shown once, here. Stored only as a hash." }),
    plan: z.literal("free"),
  })
  .meta({ id: "SignupResponse" });

/** An operation on the calling key's account: bearer auth; its answer, with the rate headers; then its own errors and the keyed ones. */
const keyedOperation = (
  operation: Pick<ZodOpenApiOperationObject, "operationId" | "summary" | "description">,
  answer: { description: string; schema: z.ZodType },
  errors: ZodOpenApiResponsesObject = {},
  query?: z.ZodObject,
): ZodOpenApiOperationObject => ({
  ...operation,
  tags: ["Account"],
  security: KEYED,
  ...(query ? { requestParams: { query } } : {}),
  responses: { "200": jsonResponse(answer.description, answer.schema, RATE_HEADERS), ...errors, ...keyedErrors },
});

export const usageOperation = keyedOperation(
  { operationId: "getUsage", summary: "The calling key's standing in the current period" },
  { description: "Usage of the calling key.", schema: Usage },
);

export const dailyUsageOperation = keyedOperation(
  {
    operationId: "getDailyUsage",
    summary: "The calling key's jobs per day, by outcome",
    description:
      "Jobs that ended on each UTC day from `from` to `to` (both included, at most 92 days; a wider range is 422 PAYLOAD_INVALID): " +
      "succeeded, failed, and of the failed those refunded. Counted from a read model of the job events, rebuilt from them if it is ever lost.",
  },
  { description: "One entry per day.", schema: DailyUsage },
  { "422": errorResponse("from or to is not a date, to is before from, or the range is over 92 days.", ["PAYLOAD_INVALID"], RATE_HEADERS) },
  DailyUsageQuery,
);

export const webhookSecretOperation = keyedOperation(
  {
    operationId: "getWebhookSecret",
    summary: "The calling key's webhook signing secret",
    description: "One secret per key (whsec_ + 32 random bytes), created with the key. Use it only to verify callbacks; keep it server-side.",
  },
  { description: "The secret.", schema: WebhookSecret },
);

export const rotateWebhookSecretOperation = keyedOperation(
  {
    operationId: "rotateWebhookSecret",
    summary: "Replace the calling key's webhook secret",
    description:
      "Makes a new secret and answers it (GET /v1/keys/webhook-secret answers it from now on too). " +
      "For 24 hours, until previous_secret_expires_at, callbacks carry a v1 signature with each in X-Service-Signature (t=…,v1=<new>,v1=<previous>) " +
      "and in webhook-signature, so receivers can switch secrets without losing a callback: accept a header when any v1 matches. " +
      "Rotating again within the 24 hours does not end the older secret: every replaced secret signs until 24 hours after its own rotation " +
      "(at most 10 replaced secrets at once; past that the oldest stops). No request body. " +
      "The public demo key's secret cannot be rotated (403 DEMO_KEY_READ_ONLY): everyone holds that key.",
  },
  { description: "The new secret.", schema: RotatedWebhookSecret },
  { "403": forbidden("DEMO_KEY_READ_ONLY also when the calling key is the public demo key, whose secret is fixed. ") },
);

export const rotateKeyOperation: ZodOpenApiOperationObject = {
  operationId: "rotateKey",
  summary: "Replace the calling key with a new one",
  description:
    "Answers a new value for the calling key, which works at once: the same account (plan, usage, templates, jobs, webhook secret), a new secret string. " +
    "The key the request was sent with (the one replaced) keeps working for 24 hours, until previous_key_expires_at, so every place it is used can be switched; " +
    "after that it is refused, 401 AUTH_INVALID. Rotating again within the 24 hours ends the older key at once. No request body. " +
    "The new key is shown once, here, and stored only as a hash. The public demo key cannot be rotated (403 DEMO_KEY_READ_ONLY): everyone holds it.",
  tags: ["Account"],
  security: KEYED,
  responses: {
    "201": jsonResponse("The key's new value.", RotatedKey, { ...RATE_HEADERS, "Cache-Control": headers.cacheControl }),
    "403": forbidden("DEMO_KEY_READ_ONLY also when the calling key is the public demo key, which everyone holds. "),
    ...keyedErrors,
  },
};

export const signupOperation: ZodOpenApiOperationObject = {
  operationId: "signup",
  summary: "Get a free-plan API key for an e-mail address",
  description: "Public. The key is shown once, in this response, and stored only as a hash: keep it. Throttled per client IP address (a few signups an hour).",
  tags: ["Account"],
  security: [],
  requestBody: { required: true, content: { "application/json": { schema: SignupRequest } } },
  responses: {
    "201": jsonResponse("The new key.", SignupResponse, { "Cache-Control": headers.cacheControl }),
    "409": errorResponse("The e-mail address already has a key.", ["AUTH_EMAIL_EXISTS"]),
    "422": errorResponse("The body failed validation, or the e-mail address is not valid.", ["PAYLOAD_INVALID"]),
    "429": errorResponse("Too many signups from this IP address.", ["SIGNUP_THROTTLED"], { "Retry-After": headers.retryAfter }),
    "500": internal,
  },
};

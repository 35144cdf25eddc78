import { RATE_HEADERS, errorResponse, header, internal, jsonResponse, keyedErrors, ref } from "../openapi/shared";

/** The OpenAPI fragment of keys/: usage, the webhook secret and its rotation, signup, and their schemas. */

export const keysOpenApiPaths = {
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
        "Makes a new secret and answers it (GET /v1/keys/webhook-secret answers it from now on too). " +
        "For 24 hours, until previous_secret_expires_at, callbacks carry two v1 signatures in X-Service-Signature (t=…,v1=<new>,v1=<previous>) " +
        "and two in webhook-signature, so receivers can switch secrets without losing a callback: accept a header when any v1 matches. " +
        "Rotating again within the 24 hours ends the older secret at once. No request body. " +
        "The public demo key's secret cannot be rotated (403 DEMO_KEY_READ_ONLY): everyone holds that key.",
      tags: ["Account"],
      security: [{ bearerAuth: [] }],
      responses: {
        "200": jsonResponse("The new secret.", ref("RotatedWebhookSecret"), RATE_HEADERS),
        "403": errorResponse("The calling key is the public demo key, whose secret is fixed.", ["DEMO_KEY_READ_ONLY"], RATE_HEADERS),
        ...keyedErrors,
      },
    },
  },
  "/v1/signup": {
    post: {
      operationId: "signup",
      summary: "Get a free-plan API key for an e-mail address",
      description:
        "Public. The key is shown once, in this response, and stored only as a hash: keep it. Throttled per client IP address (a few signups an hour).",
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
};

export const keysOpenApiSchemas = {
  Plan: { enum: ["demo", "free", "starter", "pro", "business"] },
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
};

import { z } from "@pressroom/platform";
import type { ZodOpenApiOperationObject } from "zod-openapi";
import { errorResponse, headers, internal, jsonResponse, unauthorized } from "../api-shared";

/** The schemas of console/ (the console's session: sign-in, who is signed in, sign-out) and their operations. */

export const SessionRequest = z
  .strictObject({ api_key: z.string({ error: "required, a string" }).min(1, "must not be empty").max(200, "is not an API key") })
  .meta({ id: "SessionRequest" });
export const SESSION_HINTS = { api_key: { required: 'Send {"api_key": "pr_live_…"}.', invalid: 'Send {"api_key": "pr_live_…"}.' } };

export const Session = z
  .strictObject({
    key_prefix: z.string().meta({ description: "The key's first characters, to tell keys apart; never the key." }),
    plan: z.string().meta({ description: "The key's plan." }),
    csrf_token: z.string().meta({ description: "Send it as X-CSRF-Token with every request of this session that changes anything." }),
  })
  .meta({ id: "Session" });

const setCookie = z.string().meta({
  description: "pressroom_session=<token>; Path=/; HttpOnly; SameSite=Strict; Max-Age=<seconds> (8 hours), and Secure over TLS. Max-Age=0 clears it.",
});
const noContent = (description: string) => ({
  description,
  headers: z.object({ "Request-Id": headers.requestId, "Set-Cookie": setCookie, "Cache-Control": headers.cacheControl }),
});

const SESSION_DESCRIPTION =
  "The console (pages at /console) signs in by exchanging an API key for a session: an HttpOnly cookie that page scripts cannot read, " +
  "valid 8 hours, ended by sign-out and by the key's revocation (within seconds). With the cookie instead of Authorization: Bearer, " +
  "the console calls the same /v1 operations; a request that changes anything must carry the session's X-CSRF-Token and come from the same origin.";

export const createSessionOperation: ZodOpenApiOperationObject = {
  operationId: "createConsoleSession",
  summary: "Sign in to the console with an API key",
  description: `${SESSION_DESCRIPTION} The public demo key signs in too, read-only.`,
  tags: ["Console"],
  security: [],
  requestBody: { required: true, content: { "application/json": { schema: SessionRequest } } },
  responses: {
    "204": noContent("Signed in: the session cookie is set."),
    "401": unauthorized,
    "403": errorResponse("CSRF_REJECTED: the request comes from another origin.", ["CSRF_REJECTED"]),
    "422": errorResponse("The body failed validation.", ["PAYLOAD_INVALID"]),
    "500": internal,
  },
};

export const getSessionOperation: ZodOpenApiOperationObject = {
  operationId: "getConsoleSession",
  summary: "The console session of the request's cookie",
  tags: ["Console"],
  security: [{ cookieAuth: [] }],
  responses: {
    "200": jsonResponse("The session: which key, its plan, and the token for changes.", Session, { "Cache-Control": headers.cacheControl }),
    "401": unauthorized,
    "500": internal,
  },
};

export const deleteSessionOperation: ZodOpenApiOperationObject = {
  operationId: "deleteConsoleSession",
  summary: "Sign out of the console",
  description: "Ends the session on the server (the cookie no longer works anywhere) and clears the cookie. Needs the session's X-CSRF-Token.",
  tags: ["Console"],
  security: [{ cookieAuth: [] }],
  responses: {
    "204": noContent("Signed out (also when the session had already ended)."),
    "403": errorResponse("CSRF_REJECTED: another origin, or no X-CSRF-Token of this session.", ["CSRF_REJECTED"]),
    "500": internal,
  },
};

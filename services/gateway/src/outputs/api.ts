import { z } from "@pressroom/platform";
import type { ZodOpenApiOperationObject } from "zod-openapi";
import { KEYED, RATE_HEADERS, errorResponse, forbidden, headers, internal, rateLimited, unauthorized } from "../api-shared";

const OUTPUT_CONTENT = {
  "application/pdf": { schema: z.string().meta({ contentMediaType: "application/pdf" }) },
  "image/png": { schema: z.string().meta({ contentMediaType: "image/png" }) },
  "image/jpeg": { schema: z.string().meta({ contentMediaType: "image/jpeg" }) },
  "image/webp": { schema: z.string().meta({ contentMediaType: "image/webp" }) },
  "application/zip": { schema: z.string().meta({ contentMediaType: "application/zip", description: "A batch's archive (archive: true)." }) },
};

/** The operation of outputs/: the signed download. */
export const downloadOperation: ZodOpenApiOperationObject = {
  operationId: "downloadOutput",
  summary: "Download a rendered output by its signed URL",
  description:
    "Authorised by the URL's signature, not by a key: anyone holding the URL can download the output until it expires, " +
    "so pass it point to point and keep it out of logs. " +
    "It answers one byte range (Range: bytes=a-b, a- or -n; 206 with Content-Range), as download managers and PDF viewers ask; " +
    "several ranges, another unit or If-Range get the whole output (200), a range starting past the end 416 RANGE_NOT_SATISFIABLE. " +
    'exp is the expiry in Unix seconds; sig is the hex HMAC-SHA256 of "<id>.<exp>". Outputs live 24 hours by default (options.output_ttl_seconds: 60 s to the plan\'s maximum) ' +
    "and are deleted after, or at once by DELETE /v1/outputs/{id}; then the URL answers 410. Cache-Control keeps private caches to the output's remaining life.",
  tags: ["Outputs"],
  security: [],
  requestParams: {
    path: z.object({ id: z.string() }),
    query: z.object({
      exp: z.string().regex(/^\d+$/).meta({ description: "Expiry, Unix seconds." }),
      sig: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .meta({ description: "Signature." }),
    }),
  },
  responses: {
    "200": {
      description: "The output file: a document, an image, or a batch's archive (a zip of its items' outputs).",
      headers: z.object({
        "Request-Id": headers.requestId,
        "Content-Length": headers.contentLength,
        "Accept-Ranges": headers.acceptRanges,
        "Content-Disposition": headers.contentDisposition,
        "Referrer-Policy": headers.referrerPolicy,
        "Cache-Control": headers.cacheControl,
      }),
      content: OUTPUT_CONTENT,
    },
    "206": {
      description: "The byte range the Range header asked for.",
      headers: z.object({
        "Request-Id": headers.requestId,
        "Content-Length": headers.contentLength,
        "Content-Range": headers.contentRange,
        "Accept-Ranges": headers.acceptRanges,
        "Content-Disposition": headers.contentDisposition,
        "Referrer-Policy": headers.referrerPolicy,
        "Cache-Control": headers.cacheControl,
      }),
      content: OUTPUT_CONTENT,
    },
    "403": errorResponse("The URL was modified (id, exp or sig) or is malformed.", ["URL_INVALID"]),
    "410": errorResponse("The URL has expired, or the output was deleted.", ["URL_EXPIRED"]),
    "416": errorResponse("The Range header asks for bytes starting past the output's end.", ["RANGE_NOT_SATISFIABLE"]),
    "500": internal,
  },
};

/** DELETE /v1/outputs/{id}: the output's id is the path segment of its signed URL. */
export const deleteOutputOperation: ZodOpenApiOperationObject = {
  operationId: "deleteOutput",
  summary: "Delete an output now, before it expires",
  description:
    "The id is the one in the output's URL (/v1/outputs/{id}?exp…). Only the key that rendered it may delete it; for any other key it does not exist (404). " +
    "At once, on every replica, the output's signed URL answers 410 URL_EXPIRED, GET /v1/jobs/{id} shows no url for it, and nothing of it stays stored. " +
    "Deleting it again is 404.",
  tags: ["Outputs"],
  security: KEYED,
  requestParams: {
    path: z.object({ id: z.string().meta({ description: "The output's id, from its URL's path.", examples: ["out_01jf3k2m4n5p6q7r8s9t0v1w2x"] }) }),
  },
  responses: {
    "204": { description: "Deleted.", headers: z.object({ "Request-Id": headers.requestId, ...RATE_HEADERS }) },
    "401": unauthorized,
    "403": forbidden(),
    "404": errorResponse(
      "No output with this id is stored for the calling key (never was, another key's, expired and removed, or deleted).",
      ["NOT_FOUND"],
      RATE_HEADERS,
    ),
    "429": rateLimited,
    "500": internal,
  },
};

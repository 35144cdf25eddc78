import { z } from "@pressroom/platform";
import type { ZodOpenApiOperationObject } from "zod-openapi";
import { errorResponse, headers, internal } from "../api-shared";

/** The operation of outputs/: the signed download. */
export const downloadOperation: ZodOpenApiOperationObject = {
  operationId: "downloadOutput",
  summary: "Download a rendered output by its signed URL",
  description:
    "Authorised by the URL's signature, not by a key: anyone holding the URL can download the output until it expires, " +
    "so pass it point to point and keep it out of logs. " +
    'exp is the expiry in Unix seconds; sig is the hex HMAC-SHA256 of "<id>.<exp>". Outputs live 24 hours by default and are deleted after.',
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
      description: "The output file.",
      headers: z.object({
        "Request-Id": headers.requestId,
        "Content-Length": headers.contentLength,
        "Content-Disposition": headers.contentDisposition,
        "Referrer-Policy": headers.referrerPolicy,
        "Cache-Control": headers.cacheControl,
      }),
      content: {
        "application/pdf": { schema: z.string().meta({ contentMediaType: "application/pdf" }) },
        "image/png": { schema: z.string().meta({ contentMediaType: "image/png" }) },
        "image/jpeg": { schema: z.string().meta({ contentMediaType: "image/jpeg" }) },
        "image/webp": { schema: z.string().meta({ contentMediaType: "image/webp" }) },
      },
    },
    "403": errorResponse("The URL was modified (id, exp or sig) or is malformed.", ["URL_INVALID"]),
    "410": errorResponse("The URL has expired, or the output was deleted.", ["URL_EXPIRED"]),
    "500": internal,
  },
};

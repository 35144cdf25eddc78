import { COMMON_HEADERS, errorResponse, header, internal } from "../openapi/shared";

/** The OpenAPI fragment of outputs/: the signed download. */

export const outputsOpenApiPaths = {
  "/v1/outputs/{id}": {
    get: {
      operationId: "downloadOutput",
      summary: "Download a rendered output by its signed URL",
      description:
        "Authorised by the URL's signature, not by a key: anyone holding the URL can download the output until it expires, " +
        "so pass it point to point and keep it out of logs. " +
        'exp is the expiry in Unix seconds; sig is the hex HMAC-SHA256 of "<id>.<exp>". Outputs live 24 hours by default and are deleted after.',
      tags: ["Outputs"],
      security: [],
      parameters: [
        { name: "id", in: "path", required: true, schema: { type: "string" } },
        { name: "exp", in: "query", required: true, schema: { type: "string", pattern: "^\\d+$" }, description: "Expiry, Unix seconds." },
        { name: "sig", in: "query", required: true, schema: { type: "string", pattern: "^[0-9a-f]{64}$" }, description: "Signature." },
      ],
      responses: {
        "200": {
          description: "The output file.",
          headers: {
            ...COMMON_HEADERS,
            "Content-Length": header("Content-Length"),
            "Content-Disposition": header("Content-Disposition"),
            "Referrer-Policy": header("Referrer-Policy"),
            "Cache-Control": header("Cache-Control"),
          },
          content: {
            "application/pdf": { schema: { type: "string", contentMediaType: "application/pdf" } },
            "image/png": { schema: { type: "string", contentMediaType: "image/png" } },
          },
        },
        "403": errorResponse("The URL was modified (id, exp or sig) or is malformed.", ["URL_INVALID"]),
        "410": errorResponse("The URL has expired, or the output was deleted.", ["URL_EXPIRED"]),
        "500": internal,
      },
    },
  },
};

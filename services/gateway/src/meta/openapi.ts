import { errorResponse, header, jsonResponse, ref } from "../openapi/shared";

/** The OpenAPI fragment of meta/: this document and the process's health. */

export const metaOpenApiPaths = {
  "/v1/openapi.json": {
    get: {
      operationId: "getOpenApi",
      summary: "This document",
      tags: ["Meta"],
      security: [],
      responses: {
        "200": jsonResponse(
          "The OpenAPI 3.1 document of the public API.",
          { type: "object", required: ["openapi", "info", "paths"] },
          { "Cache-Control": header("Cache-Control") },
        ),
      },
    },
  },
  "/livez": {
    get: {
      operationId: "livez",
      summary: "Liveness: the process runs",
      tags: ["Meta"],
      security: [],
      responses: { "200": jsonResponse("Alive.", ref("Health")) },
    },
  },
  "/readyz": {
    get: {
      operationId: "readyz",
      summary: "Readiness: the process can serve traffic",
      tags: ["Meta"],
      security: [],
      responses: {
        "200": jsonResponse("Ready.", ref("Health")),
        "503": errorResponse("Not ready: starting, shutting down, or a dependency is unreachable.", ["UNAVAILABLE"]),
      },
    },
  },
};

export const metaOpenApiSchemas = {
  Health: {
    type: "object",
    additionalProperties: false,
    required: ["status"],
    properties: { status: { enum: ["ok", "ready"] } },
  },
};

import { z } from "@pressroom/platform";
import type { ZodOpenApiOperationObject } from "zod-openapi";
import { errorResponse, headers, jsonResponse } from "../api-shared";

/** The operations of meta/: the OpenAPI document and the process's health. */

export const Health = z.strictObject({ status: z.enum(["ok", "ready"]) }).meta({ id: "Health" });

const meta = { tags: ["Meta"], security: [] };

export const openApiOperation: ZodOpenApiOperationObject = {
  operationId: "getOpenApi",
  summary: "This document",
  ...meta,
  responses: {
    "200": jsonResponse(
      "The OpenAPI 3.1 document of the public API.",
      z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }),
      { "Cache-Control": headers.cacheControl },
    ),
  },
};

export const livezOperation: ZodOpenApiOperationObject = {
  operationId: "livez",
  summary: "Liveness: the process runs",
  ...meta,
  responses: { "200": jsonResponse("Alive.", Health) },
};

export const readyzOperation: ZodOpenApiOperationObject = {
  operationId: "readyz",
  summary: "Readiness: the process can serve traffic",
  ...meta,
  responses: {
    "200": jsonResponse("Ready.", Health),
    "503": errorResponse("Not ready: starting, shutting down, or a dependency is unreachable.", ["UNAVAILABLE"]),
  },
};

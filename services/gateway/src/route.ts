import type { Middleware } from "koa";
import type { ZodOpenApiOperationObject } from "zod-openapi";

export interface PageRoute {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** koa-router path; `:name` parameters. */
  path: string;
  handler: Middleware;
}

/** A route of the public API: its handler, and the operation (zod schemas and prose) the OpenAPI document shows for it. */
export interface ApiRoute extends PageRoute {
  operation: ZodOpenApiOperationObject;
}

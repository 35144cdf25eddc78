import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ERROR_CODES } from "@pressroom/platform";
import { Ajv2020 } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { GatewayDeps } from "./deps";
import { openApiDocument } from "./openapi";
import { routes } from "./routes";

type Json = Record<string, unknown>;
type Doc = Json & { paths: Record<string, Record<string, Json>>; components: Json & { schemas: Record<string, Json>; headers: Record<string, Json> } };
const served = routes({ clients: {}, bus: {} } as unknown as GatewayDeps);
const doc = JSON.parse(JSON.stringify(openApiDocument(served))) as Doc;
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

function operations(): { method: string; path: string; op: Json }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}

function resolve(pointer: string): unknown {
  assert.ok(pointer.startsWith("#/"), `local $ref ${pointer}`);
  return pointer
    .slice(2)
    .split("/")
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce<unknown>((node, part) => (node as Json | undefined)?.[part], doc);
}

function* walk(node: unknown, segments: string[] = []): Generator<{ node: Json; segments: string[] }> {
  if (Array.isArray(node)) for (const [i, item] of node.entries()) yield* walk(item, [...segments, String(i)]);
  else if (node && typeof node === "object") {
    yield { node: node as Json, segments };
    for (const [key, value] of Object.entries(node)) yield* walk(value, [...segments, key]);
  }
}

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1 with a bearer security scheme, and the console's session cookie beside it on every keyed operation", () => {
    assert.match(String(doc.openapi), /^3\.1\.\d+$/);
    assert.deepEqual((doc.components.securitySchemes as Json).bearerAuth, {
      type: "http",
      scheme: "bearer",
      bearerFormat: "pr_live_<base62>",
      description: ((doc.components.securitySchemes as Json).bearerAuth as Json).description,
    });
    assert.deepEqual(
      { ...((doc.components.securitySchemes as Json).cookieAuth as Json), description: undefined },
      { type: "apiKey", in: "cookie", name: "pressroom_session", description: undefined },
    );
    for (const { method, path, op } of operations()) {
      const schemes = (op.security as Json[]).map((scheme) => Object.keys(scheme).join());
      if (schemes.includes("bearerAuth")) assert.ok(schemes.includes("cookieAuth"), `${method} ${path} takes the session cookie too`);
      if (schemes.includes("bearerAuth") && method !== "GET") {
        const forbidden = (op.responses as Record<string, Json>)["403"];
        const codes = JSON.stringify(forbidden?.content ?? {});
        assert.ok(codes.includes("CSRF_REJECTED") && codes.includes("DEMO_KEY_READ_ONLY"), `${method} ${path}: a session's refusals`);
      }
    }
  });

  it("documents exactly the routes the gateway serves", () => {
    const routeList = served.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`);
    const documented = operations().map(({ method, path }) => `${method} ${path}`);
    assert.deepEqual([...documented].sort(), [...routeList].sort());
    const ids = operations().map(({ op }) => op.operationId);
    assert.equal(new Set(ids).size, ids.length, "operationIds are unique");
  });

  it("resolves every $ref", () => {
    for (const { node, segments } of walk(doc)) {
      if (typeof node.$ref === "string") assert.notEqual(resolve(node.$ref), undefined, `${segments.join(" › ")}: ${node.$ref}`);
    }
  });

  it("has an error object of exactly three required string fields and no others, with the closed set of codes", () => {
    const error = doc.components.schemas.Error!;
    assert.equal(error.type, "object");
    assert.equal(error.additionalProperties, false);
    assert.deepEqual(error.required, ["error", "code", "hint"]);
    assert.deepEqual(Object.keys(error.properties as Json), ["error", "code", "hint"]);
    const codes = ((error.properties as Json).code as Json).enum as string[];
    assert.deepEqual([...codes].sort(), Object.keys(ERROR_CODES).sort());
  });

  it("documents every error response as the error object, and each code under its HTTP status", () => {
    for (const { method, path, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        if (!/^[45]/.test(status)) continue;
        const schema = ((response.content as Json)["application/json"] as Json).schema as Json;
        const [base, narrowed] = schema.allOf as [Json, Json];
        assert.equal(base.$ref, "#/components/schemas/Error", `${method} ${path} ${status}`);
        for (const code of ((narrowed.properties as Json).code as Json).enum as (keyof typeof ERROR_CODES)[]) {
          assert.equal(String(ERROR_CODES[code].http), status, `${method} ${path}: ${code} is HTTP ${ERROR_CODES[code].http}`);
        }
      }
    }
  });

  it("documents 401 and 429 with Retry-After and the RateLimit headers on every keyed operation", () => {
    const keyed = operations().filter(({ op }) => (op.security as Json[]).some((scheme) => "bearerAuth" in scheme));
    assert.deepEqual(keyed.map((k) => `${k.method} ${k.path}`).sort(), [
      "DELETE /v1/batches/{id}",
      "DELETE /v1/outputs/{id}",
      "DELETE /v1/templates/{id}",
      "GET /v1/batches/{id}",
      "GET /v1/batches/{id}/items",
      "GET /v1/jobs",
      "GET /v1/jobs/{id}",
      "GET /v1/keys/usage",
      "GET /v1/keys/usage/daily",
      "GET /v1/keys/webhook-secret",
      "GET /v1/templates",
      "GET /v1/templates/{id}",
      "GET /v1/templates/{id}/preview.png",
      "GET /v1/templates/{id}/versions",
      "GET /v1/templates/{id}/versions/{n}",
      "GET /v1/templates/{id}/versions/{n}/assets/{name}",
      "GET /v1/templates/{id}/versions/{n}/preview.png",
      "GET /v1/webhooks/deliveries",
      "POST /v1/batches",
      "POST /v1/billing/checkout",
      "POST /v1/image",
      "POST /v1/keys/rotate",
      "POST /v1/keys/webhook-secret/rotate",
      "POST /v1/render",
      "POST /v1/screenshot",
      "POST /v1/templates",
      "POST /v1/templates/preview",
      "POST /v1/webhooks/deliveries/{id}/replay",
      "PUT /v1/templates/{id}",
    ]);
    for (const { method, path, op } of keyed) {
      const responses = op.responses as Record<string, Json>;
      assert.ok(responses["401"], `${method} ${path} 401`);
      assert.ok((responses["401"]!.headers as Json)["WWW-Authenticate"]);
      assert.ok((responses["429"]!.headers as Json)["Retry-After"], `${method} ${path} 429 Retry-After`);
      for (const [status, response] of Object.entries(responses)) {
        if (status === "401" || status === "500") continue;
        for (const name of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]) {
          assert.ok((response.headers as Json)[name], `${method} ${path} ${status} ${name}`);
        }
      }
    }
    for (const path of ["/v1/render", "/v1/image", "/v1/screenshot"])
      assert.ok(((doc.paths[path]!.post!.responses as Record<string, Json>)["202"]!.headers as Json).Location);
  });

  it("compiles every schema with ajv (draft 2020-12, strict), in place in the document", () => {
    const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
    addFormats(ajv);
    for (const keyword of ["openapi", "info", "servers", "tags", "security", "paths", "webhooks", "components"]) ajv.addKeyword(keyword);
    const base = "https://pressroom.invalid/openapi.json";
    ajv.addSchema({ ...doc, $id: base } as object);
    let compiled = 0;
    for (const { segments } of walk(doc)) {
      const last = segments.at(-1);
      if (last !== "schema" && !(segments.length === 3 && segments[0] === "components" && segments[1] === "schemas")) continue;
      const pointer = segments.map((part) => encodeURIComponent(part.replace(/~/g, "~0").replace(/\//g, "~1"))).join("/");
      assert.doesNotThrow(() => ajv.compile({ $ref: `${base}#/${pointer}` }), pointer);
      compiled++;
    }
    assert.ok(compiled > 40, `${compiled} schemas compiled`);
  });
});

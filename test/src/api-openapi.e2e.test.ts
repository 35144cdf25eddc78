import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Exchange } from "./test-support/api";
import { OpenApiChecker } from "./test-support/openapi";
import { WITHOUT_RENDER, endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";

/**
 * The OpenAPI 3.1 document served at GET /v1/openapi.json against the running
 * gateway: every documented operation is routed, every other method on a
 * documented path is 405 with the documented methods in Allow, and the
 * checker that every api-* suite ends with really catches drift.
 * (Each api-*.e2e suite checks all the real responses it saw against this
 * document; see test-support/harness.ts.)
 */

const SAMPLE_PATH_VALUES: Record<string, string> = { id: "job_00000000000000000000000000" };

describe("the OpenAPI document", () => {
  let h: Harness;
  let checker: OpenApiChecker;
  let key: string;

  before(async () => {
    h = await startHarness({ only: WITHOUT_RENDER });
    key = (await h.admin.createKey("business")).apiKey;
  });

  after(async () => {
    await h?.stop();
  });

  it("is served publicly at GET /v1/openapi.json as OpenAPI 3.1", async () => {
    const response = await h.api.get("/v1/openapi.json");
    assert.equal(response.status, 200);
    assert.match(response.headers["content-type"] ?? "", /^application\/json/);
    assert.match(response.headers["cache-control"] ?? "", /^public/);
    const doc = response.json;
    assert.match(doc.openapi, /^3\.1\./);
    assert.deepEqual(doc.components.securitySchemes.bearerAuth.scheme, "bearer");
    const error = doc.components.schemas.Error;
    assert.deepEqual([error.required, error.additionalProperties], [["error", "code", "hint"], false]);
    for (const name of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After", "Location"]) assert.ok(doc.components.headers[name], name);
    for (const path of [
      "/v1/render",
      "/v1/image",
      "/v1/templates",
      "/v1/templates/{id}/preview.png",
      "/v1/keys/usage",
      "/v1/keys/webhook-secret",
      "/v1/billing/checkout",
      "/v1/outputs/{id}",
      "/v1/signup",
      "/v1/jobs/{id}",
      "/v1/openapi.json",
    ]) {
      assert.ok(doc.paths[path], path);
    }
    checker = new OpenApiChecker(doc);
  });

  it("every documented operation is routed, and other methods on its path are 405 with exactly the documented methods in Allow", async () => {
    const paths = Object.entries(checker.doc.paths as Record<string, Record<string, unknown>>);
    const matcher = (template: string) => new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+")}$`);
    for (const [template] of paths) {
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => SAMPLE_PATH_VALUES[name] ?? "sample");
      // A concrete path may also match another's template (POST /v1/templates/preview, GET /v1/templates/{id}): its methods are all of theirs.
      const documented = [
        ...new Set(paths.filter(([other]) => matcher(other).test(path)).flatMap(([, item]) => Object.keys(item).map((m) => m.toUpperCase()))),
      ];
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
        const response = await h.api.request(method, path, { key, json: method === "GET" ? undefined : {} });
        if (documented.includes(method)) {
          assert.ok(!(response.status === 404 && response.json?.error === "no such route"), `${method} ${template} is routed`);
          assert.notEqual(response.status, 405, `${method} ${template}`);
        } else {
          assert.equal(response.status, 405, `${method} ${template}: ${response.text}`);
          const allow = response.headers.allow!.split(", ").filter((m) => m !== "HEAD" && m !== "OPTIONS");
          assert.deepEqual(allow.sort(), documented.sort(), `Allow of ${template}`);
        }
      }
    }
  });

  it("the response checker catches a document that drifted from the code", async () => {
    const real = await h.api.get("/v1/keys/usage", { key });
    const base = h.api.exchanges.at(-1)!;
    assert.deepEqual(checker.check(base), [], "the real response conforms");
    const variant = (change: Partial<Exchange>): string[] => checker.check({ ...base, ...change });
    const json = (value: unknown) => Buffer.from(JSON.stringify(value));

    assert.match(variant({ body: json({ ...real.json, extra: 1 }) }).join(), /must NOT have additional properties/);
    assert.match(variant({ body: json({ ...real.json, plan: "platinum" }) }).join(), /must be equal to one of the allowed values/);
    assert.match(variant({ status: 418 }).join(), /status 418 is not documented/);
    assert.match(variant({ headers: { ...base.headers, "content-type": "text/html" } }).join(), /content type "text\/html" is not documented/);
    const withoutRate = { ...base.headers };
    delete withoutRate["ratelimit-remaining"];
    assert.match(variant({ headers: withoutRate }).join(), /required header RateLimit-Remaining is missing/);

    const errorBody = { error: "x", code: "RATE_LIMITED", hint: "wait" };
    const limited = { ...base, status: 429, headers: { ...base.headers, "retry-after": "3" }, body: json(errorBody) };
    assert.deepEqual(checker.check(limited), []);
    assert.match(
      checker.check({ ...limited, body: json({ ...errorBody, retry_after: 3 }) }).join(),
      /must NOT have additional properties/,
      "a fourth error field",
    );
    assert.match(checker.check({ ...limited, body: json({ error: "x", code: "RATE_LIMITED" }) }).join(), /must have required property 'hint'/);
    assert.match(checker.check({ ...limited, body: json({ ...errorBody, code: "QUOTA_EXCEEDED" }) }).join(), /allowed values/, "usage is never QUOTA_EXCEEDED");
    const noRetry: Record<string, string> = { ...limited.headers };
    delete noRetry["retry-after"];
    assert.match(checker.check({ ...limited, headers: noRetry }).join(), /required header Retry-After is missing/);

    assert.match(
      checker.check({ ...base, method: "DELETE", status: 405, headers: { ...base.headers, allow: "GET, POST" } }).join(),
      /Allow "GET, POST" is not the documented GET/,
    );
    assert.match(checker.check({ ...base, path: "/v1/nowhere", status: 200 }).join(), /undocumented path answered 200/);
    assert.match(
      checker
        .check({
          ...base,
          method: "POST",
          path: "/v1/render",
          status: 202,
          requestJson: { html: "<p>x</p>", data: {}, extra: true },
          headers: { ...base.headers, location: "/v1/jobs/job_00000000000000000000000000" },
          body: json({ id: "job_00000000000000000000000000", status: "queued" }),
        })
        .join(),
      /accepted a request body the document rejects/,
    );
  });

  endOfSuiteChecks(() => h);
});

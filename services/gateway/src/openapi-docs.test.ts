import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PAID_PLANS, PLANS } from "@pressroom/domain";
import type { GatewayDeps } from "./deps";
import { openApiDocument } from "./openapi";
import { routes } from "./routes";

interface Operation {
  summary: string;
  description: string;
  parameters: { in: string; name: string }[];
  responses: Record<string, unknown>;
  callbacks: Record<string, Record<string, { post: Operation }>>;
}
interface Doc {
  webhooks: Record<string, { post: Operation }>;
  paths: Record<string, Record<string, Operation>>;
}
const doc = JSON.parse(JSON.stringify(openApiDocument(routes({ clients: {}, bus: {} } as unknown as GatewayDeps)))) as Doc;
const post = (path: string): Operation => doc.paths[path]!.post!;

/** What the OpenAPI document says about the things the service does that a reader cannot see in a schema. */
describe("the OpenAPI document's prose matches the service", () => {
  const callbacks = [doc.webhooks.jobFinished!.post, post("/v1/render").callbacks.jobFinished!["{$request.body#/webhook_url}"]!.post];

  it("names both signature schemes' headers, the timeout, the retry window and 410 for every callback", () => {
    for (const callback of callbacks) {
      const names = callback.parameters.filter((p) => p.in === "header").map((p) => p.name);
      assert.deepEqual(names.sort(), ["X-Service-Signature", "webhook-id", "webhook-signature", "webhook-timestamp"]);
      assert.match(callback.description, /Standard Webhooks/);
      assert.match(callback.description, /within 10 s/);
      assert.match(callback.description, /until 24 h after the job finished/);
      assert.match(callback.description, /410 Gone stops/);
      assert.ok(callback.responses["410"], "410 is an answer of its own");
    }
  });

  it("says /v1/image makes PNG, JPEG or WebP from a template or a public page", () => {
    assert.match(post("/v1/image").summary, /PNG, JPEG or WebP.*template or a public page/);
    assert.match(post("/v1/render").summary, /public page/);
  });

  it("gives each paid plan's price as one payment, not a subscription", () => {
    const { description } = post("/v1/billing/checkout");
    assert.match(description, /each one payment \(not a subscription/);
    for (const plan of PAID_PLANS) assert.ok(description.includes(`${plan} $${PLANS[plan].priceUsd}`), plan);
  });

  it("says pdfa drops the document's tag structure", () => {
    const found = JSON.stringify(doc).match(/"description":"Make an archival PDF\/A document[^"]*"/)?.[0] ?? "";
    assert.match(found, /loses its tag structure/);
  });
});
